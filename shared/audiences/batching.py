"""Split prepared rows into the batches of one upload session (docs/platform-notes.md §3.2-§3.4).

Batches are a pure function of (rows, session): batch ``n`` always holds the same rows, so an upload
can stop after any batch and resume from the last one the platform acknowledged, resending a failed
batch with the same rows and ``batch_seq``. Nobody is sent twice under two sequence numbers, nobody is
skipped. The caller must keep the rows in the same order between attempts: store the prepared rows
(or the input users with their country and the store country) with the session. The CSV snapshot is
not enough, as the spec's snapshot columns have no country.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from shared.audiences.identifiers import SCHEMA
from shared.errors import ValidationFailed

# The platform's documented maximum rows per /users or /usersreplace request.
MAX_ROWS_PER_BATCH = 10_000
_INT64_MAX = 2**63 - 1


class UploadSession(BaseModel):
    """One upload session: its id, how many rows it carries and how they are cut into batches."""

    model_config = ConfigDict(frozen=True)

    session_id: int = Field(gt=0, le=_INT64_MAX, description="Advertiser-chosen positive int64.")
    total_rows: int = Field(ge=0, description="Rows in the whole session; sent as estimated_num_total.")
    batch_size: int = Field(default=MAX_ROWS_PER_BATCH, ge=1, le=MAX_ROWS_PER_BATCH)

    @property
    def total_batches(self) -> int:
        """Number of batches: ceil(total_rows / batch_size); 0 for an empty audience."""
        return -(-self.total_rows // self.batch_size)


@dataclass(frozen=True, slots=True)
class UploadBatch:
    """One request's worth of rows with its position in the session.

    A dataclass, not a pydantic model: rows are already validated, and re-validating 10,000 rows per
    batch would cost more than building the request.
    """

    session_id: int
    batch_seq: int
    last_batch_flag: bool
    estimated_num_total: int
    rows: Sequence[Sequence[str]]
    schema_keys: tuple[str, ...] = SCHEMA

    def session_param(self) -> dict[str, Any]:
        """The request's ``session`` object."""
        return {
            "session_id": self.session_id,
            "batch_seq": self.batch_seq,
            "last_batch_flag": self.last_batch_flag,
            "estimated_num_total": self.estimated_num_total,
        }

    def payload_param(self) -> dict[str, Any]:
        """The request's ``payload`` object: multi-key schema and rows of already hashed values.

        ``is_raw`` is true because the keys are single (not combined like ``LN_FN_ZIP``); the SDK
        requires it for multi-key uploads.
        """
        return {"schema": list(self.schema_keys), "is_raw": True, "data": [list(row) for row in self.rows]}


def new_session_id(random_bits: Callable[[int], int] = secrets.randbits) -> int:
    """A random positive int64 for a new session (62 random bits + 1, so never 0, never negative)."""
    return random_bits(62) + 1


def new_upload_session(
    total_rows: int,
    *,
    batch_size: int = MAX_ROWS_PER_BATCH,
    random_bits: Callable[[int], int] = secrets.randbits,
) -> UploadSession:
    """A session for ``total_rows`` rows with a fresh random id; store it to be able to resume."""
    return UploadSession(session_id=new_session_id(random_bits), total_rows=total_rows, batch_size=batch_size)


def iter_batches(
    rows: Sequence[Sequence[str]], session: UploadSession, *, after_batch_seq: int = 0
) -> Iterator[UploadBatch]:
    """The batches of ``session`` that follow ``after_batch_seq`` (the last one acknowledged; 0 = none).

    Raises ``ValidationFailed`` when ``rows`` are not the rows the session was made for (count differs)
    or the resume point is outside the session.
    """
    if len(rows) != session.total_rows:
        raise ValidationFailed(
            f"The session was created for {session.total_rows} rows but {len(rows)} were given.",
            field="rows",
            remedy="Resume with exactly the rows the session was created for, in the same order.",
        )
    if not 0 <= after_batch_seq <= session.total_batches:
        raise ValidationFailed(
            f"Batch {after_batch_seq} is not in this session of {session.total_batches} batches.",
            field="after_batch_seq",
            remedy="Pass the batch_seq of the last batch the platform acknowledged, or 0 to start.",
        )
    for batch_seq in range(after_batch_seq + 1, session.total_batches + 1):
        yield batch_at(rows, session, batch_seq)


def batch_at(rows: Sequence[Sequence[str]], session: UploadSession, batch_seq: int) -> UploadBatch:
    """Batch number ``batch_seq`` (1-based) of ``session``: always the same rows for the same input.

    Use it to retry one failed batch. Raises ``ValidationFailed`` when ``batch_seq`` is not in the session.
    """
    if not 1 <= batch_seq <= session.total_batches:
        raise ValidationFailed(
            f"Batch {batch_seq} is not in this session of {session.total_batches} batches.",
            field="batch_seq",
            remedy="Batches are numbered from 1 to the session's total_batches.",
        )
    start = (batch_seq - 1) * session.batch_size
    return UploadBatch(
        session_id=session.session_id,
        batch_seq=batch_seq,
        last_batch_flag=batch_seq == session.total_batches,
        estimated_num_total=session.total_rows,
        rows=rows[start : start + session.batch_size],
    )
