"""A segment's customers from a dataset version's ``customers.parquet``: the engine joins the chosen
user ids to the file, so only the segment's rows ever leave it (docs/data-plane.md)."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from shared.dataplane.runner import query_runner

COLUMNS = (
    "user_id",
    "email",
    "first_name",
    "last_name",
    "phone",
    "country",
    "limited_data_use",
    "state",
    "city",
    "postcode",
    "date_of_birth",
    "gender",
    "external_id",
    "madid",
)


def segment_customers(parquet: bytes, user_ids: NDArray[np.str_]) -> dict[str, list[Any]]:
    """The customers among ``user_ids`` in ``parquet`` (a version's ``customers.parquet``), by
    ``user_id``: each of :data:`COLUMNS` as a list (None: not given)."""
    with query_runner() as engine:
        path = engine.path("customers.parquet")
        path.write_bytes(parquet)
        engine.register("segment_users", {"user_id": np.asarray(user_ids, dtype=object)})
        columns = engine.columns("read_segment_customers", {"path": str(path)})
    # A masked (NULL) cell is None in ``tolist``.
    return {name: list(columns[name].tolist()) for name in COLUMNS}
