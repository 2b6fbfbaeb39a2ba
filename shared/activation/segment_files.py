"""A segment activation's files, written from the engine in bounded chunks (issue 20, item 4).

SelectUsers of a segment turns the users a segment's rule chose (``SegmentColumns``: numpy columns of
ids, scores and values) into the users file NormaliseAndHash reads, the holdout's groups file and the
audience's snapshot. The chosen users go into the engine a chunk at a time, are joined there to
their identifiers in the dataset version's ``customers.parquet`` and ranked best first
(``activation_segment_users``); a holdout's draws are made per block of ranks
(``shared.audiences.holdout.held_ranks``, the draws ``split_holdout`` makes, so a seed keeps the same
users out as it always did) and marked in the engine; the files come out as lines, ``rows_per_write``
at a time, exactly as ``users_csv``, ``groups_csv`` and ``shared.audiences.snapshot`` write them
(``tests/unit/activation/test_segment_files.py`` compares them). No step holds one Python object per
user of the segment; only the lines of one chunk are Python strings at a time.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from shared.activation.users_files import VALUE_CSV_COLUMN, users_csv_header
from shared.audiences.snapshot import GROUP_COLUMN, SNAPSHOT_COLUMNS, SNAPSHOT_START
from shared.dataplane.customers import COLUMNS as CUSTOMER_COLUMNS

if TYPE_CHECKING:
    from shared.dataplane.runner import QueryRunner

# Chosen users handed to the engine per insert, and lines fetched per write: bounds the Python side.
USERS_PER_INSERT = 200_000
ROWS_PER_WRITE = 100_000
# The columns some user must have a value in for the users file to write them, in the order
# activation_segment_present answers: the customer columns after the ones every users file writes
# (user_id to country).
PRESENT_COLUMNS = CUSTOMER_COLUMNS[CUSTOMER_COLUMNS.index("limited_data_use") :]


@dataclass(frozen=True)
class SegmentInEngine:
    """The segment's users with a customer row, in the engine (``segment_users``): how many, how
    many a holdout keeps out, and whether they carry predicted values."""

    users: int
    held: int
    values: bool

    @property
    def uploaded(self) -> int:
        return self.users - self.held


def load_segment(
    engine: QueryRunner,
    customers: Path,
    user_ids: NDArray[Any],
    scores: NDArray[np.float64],
    values: NDArray[np.float64] | None,
    *,
    per_insert: int = USERS_PER_INSERT,
) -> SegmentInEngine:
    """The chosen users (parallel columns) joined in the engine to ``customers`` (a dataset version's
    ``customers.parquet``) and ranked best first; users without a customer row are left out. The ids
    are str, or UTF-8 bytes (as the serving shards keep them), decoded ``per_insert`` at a time."""
    engine.run("activation_macros")
    engine.run("activation_segment_chosen")
    for first in range(0, int(user_ids.size), per_insert):
        last = first + per_insert
        engine.insert(
            "segment_chosen",
            {
                "user_id": _decoded(user_ids[first:last]),
                "score": scores[first:last],
                "value": (
                    np.full(min(last, user_ids.size) - first, None, dtype=object)
                    if values is None
                    else values[first:last]
                ),
            },
        )
    engine.run("activation_segment_users", {"path": str(customers)})
    ((users,),) = engine.rows("activation_segment_count")
    return SegmentInEngine(users=int(users), held=0, values=values is not None)


def hold_out(engine: QueryRunner, segment: SegmentInEngine, ranks: array[int]) -> SegmentInEngine:
    """Mark the users at ``ranks`` (``held_ranks``: 0 is the best score) as kept out of the upload."""
    if ranks:
        engine.register("held_ranks", {"rank": np.frombuffer(ranks, dtype=np.int64)})
        engine.run("activation_segment_hold")
    return SegmentInEngine(users=segment.users, held=len(ranks), values=segment.values)


def write_users_file(engine: QueryRunner, segment: SegmentInEngine, path: Path) -> int:
    """The users file of the uploaded users (``users_csv``: the columns some uploaded user has, the
    predicted value for a value-based seed) into ``path``; the number of users written."""
    ((*present,),) = engine.rows("activation_segment_present")
    flags = dict(zip(PRESENT_COLUMNS, (bool(flag) for flag in present), strict=True))
    header, _ = users_csv_header(flags)
    if segment.values:
        header = (*header, VALUE_CSV_COLUMN)
    return _write_lines(
        engine,
        path,
        b"",
        header,
        "activation_segment_users_lines",
        {**flags, "with_value": segment.values},
    )


def write_groups_file(engine: QueryRunner, path: Path) -> int:
    """The holdout's groups file (``groups_csv``: user_id, score, group of every user) into ``path``."""
    return _write_lines(
        engine, path, b"", ("user_id", "score", "group"), "activation_segment_group_lines", {}
    )


def write_snapshot_file(
    engine: QueryRunner, segment: SegmentInEngine, path: Path, *, with_group: bool
) -> int:
    """The audience's snapshot of every user (``shared.audiences.snapshot``, the group column when a
    holdout split them) into ``path``."""
    columns = (*SNAPSHOT_COLUMNS, GROUP_COLUMN) if with_group else SNAPSHOT_COLUMNS
    return _write_lines(
        engine, path, SNAPSHOT_START, columns, "activation_segment_snapshot_lines", {"with_group": with_group}
    )


def _write_lines(
    engine: QueryRunner,
    path: Path,
    start: bytes,
    header: tuple[str, ...],
    query: str,
    parameters: dict[str, object],
    rows_per_write: int = ROWS_PER_WRITE,
) -> int:
    """A CSV file of ``header`` (plain names: no quoting needed) and the query's lines, ranks
    ``rows_per_write`` at a time, CRLF after each as Python's csv module ends them; the number of
    lines after the header."""
    ((users,),) = engine.rows("activation_segment_count")
    count = 0
    with path.open("wb") as file:
        file.write(start + (",".join(header) + "\r\n").encode())
        for first in range(0, int(users), rows_per_write):
            rows = engine.rows(query, {**parameters, "first": first, "last": first + rows_per_write - 1})
            if rows:
                file.write(("\r\n".join(line for (line,) in rows) + "\r\n").encode())
                count += len(rows)
    return count


def _decoded(ids: NDArray[Any]) -> NDArray[np.str_]:
    """A chunk of user ids as str, from str or UTF-8 bytes."""
    return np.char.decode(ids, "utf-8") if ids.dtype.kind == "S" else ids
