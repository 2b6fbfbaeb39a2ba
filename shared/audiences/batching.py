"""Split prepared rows into the batches of one upload session (docs/platform-notes.md §3.2-§3.4).

Batches are a pure function of (rows, session): batch ``n`` always holds the same rows, so an upload
can stop after any batch and resume from the last one the platform acknowledged, resending a failed
batch with the same rows and ``batch_seq``. Nobody is sent twice under two sequence numbers, nobody is
skipped. The caller must keep the rows in the same order between attempts: store the prepared rows
(or the input users with their country and the store country) with the session. The CSV snapshot is
not enough, as the spec's snapshot columns have no country.

The session and batch types, and the request each batch becomes, are the platform's
(``shared.platform.audiences``); this module only decides which rows go in which batch.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator, Sequence

from shared.errors import ValidationFailed
from shared.platform.audiences import MAX_ROWS_PER_CALL, UploadBatch, UploadSession


def new_session_id(random_bits: Callable[[int], int] = secrets.randbits) -> int:
    """A random positive int64 for a new session (62 random bits + 1, so never 0, never negative)."""
    return random_bits(62) + 1


def new_upload_session(
    total_rows: int,
    *,
    batch_size: int = MAX_ROWS_PER_CALL,
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
    start = (batch_seq - 1) * session.batch_size
    return UploadBatch(session=session, batch_seq=batch_seq, rows=rows[start : start + session.batch_size])
