"""Which customers can be reached on the platform: identifier coverage, computed once per dataset.

A sync normalises every customer's identifiers with the audience upload's own rules (the activation's
normalisation in the engine, ``shared.activation.hashing``; ``shared.datasources.sync.write_coverage``)
and keeps the outcome as boolean columns in an ``.npz`` beside the dataset, sorted by ``user_id``. A
targeting preview then joins a segment to it with one binary search instead of reading and
normalising a million customers per request. The file holds
no identifier but the ``user_id`` (the merchant's own key).
"""

from __future__ import annotations

import io
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

FLAGS = ("has_email", "has_phone", "has_name", "usable_email", "usable_phone", "usable_name", "usable")


@dataclass(frozen=True)
class Coverage:
    """Per-customer identifier flags, aligned with the sorted ``user_ids``."""

    user_ids: NDArray[np.str_]
    countries: NDArray[np.str_]
    flags: dict[str, NDArray[np.bool_]]

    def positions(self, user_ids: NDArray[np.str_]) -> NDArray[np.int64]:
        """Index of each of ``user_ids`` here, or -1 for a user without a customer row."""
        if self.user_ids.size == 0:
            return np.full(user_ids.size, -1, dtype=np.int64)
        found = np.searchsorted(self.user_ids, user_ids).clip(max=self.user_ids.size - 1)
        return np.where(self.user_ids[found] == user_ids, found, -1).astype(np.int64)


def write_coverage(coverage: Coverage) -> bytes:
    buffer = io.BytesIO()
    np.savez(
        buffer, allow_pickle=False, user_ids=coverage.user_ids, countries=coverage.countries, **coverage.flags
    )
    return buffer.getvalue()


def read_coverage(data: bytes) -> Coverage:
    with np.load(io.BytesIO(data), allow_pickle=False) as npz:
        return Coverage(
            user_ids=npz["user_ids"],
            countries=npz["countries"],
            flags={name: npz[name] for name in FLAGS},
        )
