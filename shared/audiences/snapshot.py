"""CSV snapshot of an audience, as downloaded from the dashboard (docs/service-contract.md §1, §2.4).

The snapshot holds the values exactly as the merchant gave them: it lives in the merchant's own
encrypted bucket and is what they check an audience against. Merchants open it in a spreadsheet, so:

- it starts with a UTF-8 byte order mark: spreadsheet programs read a CSV without one in the
  system's legacy code page, which garbles every accented name (``Zoë`` shown as ``ZoÃ«``);
- a text cell a spreadsheet would run as a formula is prefixed with ``'`` (OWASP "CSV injection"):
  one starting with ``=``, ``@``, tab or carriage return, or with ``+`` or ``-`` followed by
  anything but digits, spaces and phone punctuation. ``+44 7700 900123`` or ``-12`` cannot call a
  function or name a cell in any spreadsheet, so they stay as written, readable; ``-2+3``,
  ``+A1`` and ``-Mary`` are prefixed. What LibreOffice computes and shows for each kind of cell is
  checked by opening a snapshot in it (``tests/integration/test_snapshot_spreadsheet.py``).

The score is a number we format ourselves, so a negative score such as ``-0.5`` stays numeric.
"""

from __future__ import annotations

import codecs
import csv
import io
import re
from collections.abc import Iterable, Iterator

from shared.audiences.identifiers import AudienceUser

SNAPSHOT_COLUMNS: tuple[str, ...] = ("user_id", "email", "firstName", "lastName", "phone", "score")
# A segment audience with a holdout adds this column: ``uploaded`` or ``holdout`` (never uploaded).
GROUP_COLUMN = "group"
_FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
# A sign followed only by digits, spaces and phone punctuation: arithmetic at most, never a function
# or a reference, so no spreadsheet can be made to do anything with it.
_INERT = re.compile(r"[+-][\d ().\-/]*")
# The first bytes of every snapshot (see the module docstring).
SNAPSHOT_START = codecs.BOM_UTF8
DEFAULT_ROWS_PER_CHUNK = 5_000


def csv_safe_text(value: str | None) -> str:
    """A text cell no spreadsheet will run as a formula: ``"=SUM(A1)"`` -> ``"'=SUM(A1)"``, while
    ``"+44 7700 900123"`` stays as it is (see the module docstring); None -> ``""``."""
    if not value:
        return ""
    if not value.startswith(_FORMULA_TRIGGERS) or _INERT.fullmatch(value):
        return value
    return "'" + value


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
    """UTF-8 CSV chunks (byte order mark and header first) of ``users``, for streaming to S3 without
    holding the whole file.

    Each chunk holds up to ``rows_per_chunk`` complete rows; lines end with CRLF as RFC 4180 says.
    ``groups`` (parallel to ``users``) adds the ``group`` column: which users a holdout kept out.
    """
    buffer = io.StringIO()
    buffer.write(SNAPSHOT_START.decode())
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
