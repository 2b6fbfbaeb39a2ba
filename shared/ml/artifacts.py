"""Where trained models are written: a small store interface and the layout.

Training never talks to S3 itself: the caller passes an :class:`ArtifactStore` (the training Lambda an
S3-backed one, ``python -m tools.train`` a local directory), so the ML code stays testable without AWS.

Layout under ``models/{name}/{version}/``: ``pipeline.joblib`` (scikit-learn, for retraining and audits),
``bundle.npz`` (numpy-only scoring) and ``metadata.json`` (everything in ``TrainedModel`` but the bytes,
with each artifact's SHA-256). ``metadata.json`` is written last: a reader that finds it can rely on
the artifacts it lists being complete.
"""

from __future__ import annotations

from typing import Protocol

from shared.ml.trained import TrainedModel


class ArtifactStore(Protocol):
    """Anything that can store bytes under a key (S3 bucket, local directory, in-memory dict)."""

    def put(self, key: str, data: bytes) -> None: ...


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
