"""What ``S3BlobStore`` does many objects at a time (``fetch_into``, ``download_all``, ``delete_all``),
one at a time, for the benchmarks' in-memory and on-disk stand-ins of the data bucket."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path


class BulkBlobs:
    """Mixed into a stand-in with ``get``, ``download`` and ``delete``."""

    def get(self, key: str) -> bytes:
        raise NotImplementedError

    def download(self, key: str, path: Path) -> None:
        raise NotImplementedError

    def delete(self, key: str) -> None:
        raise NotImplementedError

    def download_all(self, targets: Sequence[tuple[str, Path]]) -> None:
        for key, path in targets:
            self.download(key, path)

    def fetch_into(self, keys: Sequence[str], path: Path, separator: bytes = b"\n") -> None:
        with path.open("wb") as file:
            for key in keys:
                file.write(self.get(key) + separator)

    def delete_all(self, keys: Sequence[str]) -> None:
        for key in keys:
            self.delete(key)
