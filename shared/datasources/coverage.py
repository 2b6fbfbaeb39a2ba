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
from shared.ml.validation import CustomerColumns

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


def build_coverage(customers: CustomerColumns) -> Coverage:
    """Normalise every customer's identifiers (the upload's rules) and record what survives.

    ``customers`` are a sync's good customers (unique ``user_id``s; "" for a value not given).
    """
    order = sorted(range(len(customers.user_ids)), key=customers.user_ids.__getitem__)

    def ordered(values: list[str]) -> list[str]:
        return [values[i] for i in order]

    user_ids = ordered(customers.user_ids)
    columns = IdentifierColumns(
        user_ids=user_ids,
        emails=ordered(customers.emails),
        phones=ordered(customers.phones),
        first_names=ordered(customers.first_names),
        last_names=ordered(customers.last_names),
        countries=ordered(customers.countries),
    )
    prepared = prepare_columns(columns)
    # Rows are (EXTERN_ID, EMAIL, PHONE, FN, LN, COUNTRY), only for customers with an e-mail or phone,
    # in the customers' order: their extern ids place them.
    place = {extern_id(user_id) if "@" in user_id else user_id: i for i, user_id in enumerate(user_ids)}
    rows = prepared.rows
    at = np.fromiter((place[row[0]] for row in rows), dtype=np.int64, count=len(rows))
    n = len(user_ids)
    flags = {name: np.zeros(n, dtype=bool) for name in FLAGS}
    flags["has_email"] = np.fromiter(map(bool, columns.emails), dtype=bool, count=n)
    flags["has_phone"] = np.fromiter(map(bool, columns.phones), dtype=bool, count=n)
    flags["has_name"] = np.fromiter(map(bool, columns.first_names), dtype=bool, count=n) & np.fromiter(
        map(bool, columns.last_names), dtype=bool, count=n
    )
    flags["usable"][at] = True
    flags["usable_email"][at] = np.fromiter((bool(row[1]) for row in rows), dtype=bool, count=len(rows))
    flags["usable_phone"][at] = np.fromiter((bool(row[2]) for row in rows), dtype=bool, count=len(rows))
    flags["usable_name"][at] = np.fromiter(
        (bool(row[3] and row[4]) for row in rows), dtype=bool, count=len(rows)
    )
    return Coverage(
        user_ids=np.array(user_ids, dtype=np.str_),
        countries=np.array(columns.countries, dtype="<U2"),
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
