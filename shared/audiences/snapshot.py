"""CSV snapshot of an audience, as downloaded from the dashboard (docs/service-contract.md §1, §2.4).

The snapshot holds the values exactly as the merchant gave them: it lives in the merchant's own
encrypted bucket and is what they check an audience against. Because merchants open it in a
spreadsheet, text cells that a spreadsheet would run as a formula (starting with ``=``, ``+``, ``-``,
``@``, tab or carriage return) are prefixed with ``'`` (OWASP "CSV injection"). A phone written
``+44 7700 900123`` therefore appears as ``'+44 7700 900123``. The score is a number we format
ourselves, so a negative score such as ``-0.5`` stays numeric and is never prefixed.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator

from shared.audiences.identifiers import AudienceUser

SNAPSHOT_COLUMNS: tuple[str, ...] = ("user_id", "email", "firstName", "lastName", "phone", "score")
# A segment audience with a holdout adds this column: ``uploaded`` or ``holdout`` (never uploaded).
GROUP_COLUMN = "group"
_FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
DEFAULT_ROWS_PER_CHUNK = 5_000


def csv_safe_text(value: str | None) -> str:
    """A text cell that no spreadsheet will evaluate: ``"=SUM(A1)"`` -> ``"'=SUM(A1)"``; None -> ``""``."""
    if not value:
        return ""
    return "'" + value if value.startswith(_FORMULA_TRIGGERS) else value


def score_cell(score: float | None) -> str:
    """The score as a plain number (shortest form that reads back as the same float); None -> ``""``."""
    return "" if score is None else repr(score)


def snapshot_row(user: AudienceUser) -> tuple[str, ...]:
    """One CSV row of ``user`` in ``SNAPSHOT_COLUMNS`` order."""
    return (
        csv_safe_text(user.user_id),
        csv_safe_text(user.email),
        csv_safe_text(user.first_name),
        csv_safe_text(user.last_name),
        csv_safe_text(user.phone),
        score_cell(user.score),
    )


def iter_snapshot_csv(
    users: Iterable[AudienceUser],
    *,
    rows_per_chunk: int = DEFAULT_ROWS_PER_CHUNK,
    groups: Iterable[str] | None = None,
) -> Iterator[bytes]:
    """UTF-8 CSV chunks (header first) of ``users``, for streaming to S3 without holding the whole file.

    Each chunk holds up to ``rows_per_chunk`` complete rows; lines end with CRLF as RFC 4180 says.
    ``groups`` (parallel to ``users``) adds the ``group`` column: which users a holdout kept out.
    """
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    group_of = iter(groups) if groups is not None else None
    writer.writerow(SNAPSHOT_COLUMNS if group_of is None else (*SNAPSHOT_COLUMNS, GROUP_COLUMN))
    pending = 0
    for user in users:
        row = snapshot_row(user)
        writer.writerow(row if group_of is None else (*row, next(group_of)))
        pending += 1
        if pending >= rows_per_chunk:
            yield _drain(buffer)
            pending = 0
    if tail := _drain(buffer):
        yield tail


def snapshot_csv(users: Iterable[AudienceUser]) -> bytes:
    """The whole snapshot of ``users`` as one UTF-8 CSV document."""
    return b"".join(iter_snapshot_csv(users))


def _drain(buffer: io.StringIO) -> bytes:
    chunk = buffer.getvalue().encode()
    buffer.seek(0)
    buffer.truncate()
    return chunk
