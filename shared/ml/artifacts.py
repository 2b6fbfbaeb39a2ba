"""Where trained models are written: a small store interface, a local-directory store, and the layout.

Training never talks to S3 itself: the caller passes an :class:`ArtifactStore` (the training Lambda an
S3-backed one, the CLI :class:`LocalDirectoryStore`), so the ML code stays testable without AWS.

Layout under ``models/{name}/{version}/``: ``pipeline.joblib`` (scikit-learn, for retraining and audits),
``bundle.npz`` (numpy-only scoring) and ``metadata.json`` (everything in ``TrainedModel`` but the bytes,
with each artifact's SHA-256). ``metadata.json`` is written last: a reader that finds it can rely on
the artifacts it lists being complete.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from shared.ml.training import TrainedModel


class ArtifactStore(Protocol):
    """Anything that can store bytes under a key (S3 bucket, local directory, in-memory dict)."""

    def put(self, key: str, data: bytes) -> None: ...


class LocalDirectoryStore:
    """Stores each key as a file below ``root`` (keys use ``/`` separators)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def put(self, key: str, data: bytes) -> None:
        """Write ``data`` to ``root/key`` atomically (temp file then rename), creating directories."""
        path = (self.root / key).resolve()
        if not path.is_relative_to(self.root.resolve()):
            raise ValueError(f"artifact key escapes the store root: {key}")
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(path.suffix + ".tmp")
        temporary.write_bytes(data)
        temporary.replace(path)


def model_prefix(name: str, version: str) -> str:
    """Key prefix of one model version, e.g. ``models/churn/20250101T000000Z/``."""
    return f"models/{name}/{version}/"


def save_trained_model(model: TrainedModel, store: ArtifactStore) -> dict[str, str]:
    """Write ``model``'s artifacts then its metadata to ``store``; returns ``{artifact: key}``."""
    prefix = model_prefix(model.name, model.version)
    keys = {}
    for role, artifact in model.artifacts.items():
        keys[role] = prefix + artifact.file_name
        store.put(keys[role], artifact.data)
    keys["metadata"] = prefix + "metadata.json"
    store.put(keys["metadata"], model.model_dump_json(indent=2).encode())
    return keys
