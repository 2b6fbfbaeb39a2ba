"""Which customers can be reached on the platform: identifier coverage, computed once per dataset.

A sync normalises every customer's identifiers with the audience upload's own rules
(:func:`shared.audiences.preparation.prepare_columns`) and keeps the outcome as boolean columns in an
``.npz`` beside the dataset, sorted by ``user_id``. A targeting preview then joins a segment to it with
one binary search instead of reading and normalising a million customers per request. The file holds
no identifier but the ``user_id`` (the merchant's own key).
"""

from __future__ import annotations

import io
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from shared.audiences.identifiers import extern_id
from shared.audiences.preparation import IdentifierColumns, prepare_columns
from shared.ml.datasets import CustomerRecord

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


def build_coverage(customers: list[CustomerRecord]) -> Coverage:
    """Normalise every customer's identifiers (the upload's rules) and record what survives."""
    ordered = sorted(customers, key=lambda c: c.user_id)
    columns = IdentifierColumns(
        user_ids=[c.user_id for c in ordered],
        emails=[c.email for c in ordered],
        phones=[c.phone for c in ordered],
        first_names=[c.first_name for c in ordered],
        last_names=[c.last_name for c in ordered],
        countries=[c.country for c in ordered],
    )
    prepared = prepare_columns(columns)
    # Rows are (EXTERN_ID, EMAIL, PHONE, FN, LN, COUNTRY), only for customers with an e-mail or phone.
    usable_rows = {row[0]: row for row in prepared.rows}
    n = len(ordered)
    flags = {name: np.zeros(n, dtype=bool) for name in FLAGS}
    for i, customer in enumerate(ordered):
        flags["has_email"][i] = bool(customer.email)
        flags["has_phone"][i] = bool(customer.phone)
        flags["has_name"][i] = bool(customer.first_name and customer.last_name)
        row = usable_rows.get(extern_id(customer.user_id))
        if row is not None:
            flags["usable"][i] = True
            flags["usable_email"][i] = bool(row[1])
            flags["usable_phone"][i] = bool(row[2])
            flags["usable_name"][i] = bool(row[3] and row[4])
    return Coverage(
        user_ids=np.array([c.user_id for c in ordered], dtype=np.str_),
        countries=np.array([c.country or "" for c in ordered], dtype="<U2"),
        flags=flags,
    )


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
