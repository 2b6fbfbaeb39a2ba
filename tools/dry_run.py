"""Dry run of an audience upload: what would be sent, without sending anything.

    python -m tools.dry_run users.csv [--country GB] [--out rows.jsonl] [--batch-size N]

Reads a CSV with the spec's columns (``user_id,email,firstName,lastName,phone,score``, plus an
optional ``country``), prints the quality report as JSON, and with ``--out`` writes one JSON line per
request exactly as the upload would send it: ``{"session": {...}, "payload": {"schema": [...],
"data": [...]}}``. Only the session id differs between runs (it is random per session).
Rows the upload would reject are listed by line and field, never by value. Exit status: 0 when the
file is valid, 2 when it is not.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from shared.audiences.batching import iter_batches, new_upload_session
from shared.audiences.preparation import PreparedAudience, prepare_audience
from shared.audiences.uploads import InvalidFile, read_users
from shared.errors import ValidationFailed
from shared.platform.audiences import MAX_ROWS_PER_CALL, upload_request

_MAX_ERRORS_SHOWN = 20


def write_requests(prepared: PreparedAudience, out: TextIO, *, batch_size: int = MAX_ROWS_PER_CALL) -> int:
    """Write one JSON line per upload request of ``prepared`` to ``out``; returns the number written."""
    session = new_upload_session(len(prepared.rows), batch_size=batch_size)
    written = 0
    for batch in iter_batches(prepared.rows, session):
        out.write(json.dumps(upload_request(prepared.schema, batch)) + "\n")
        written += 1
    return written


def main(argv: Sequence[str] | None = None) -> int:
    """Run the dry run with command-line ``argv``; returns the process exit status."""
    args = _parser().parse_args(argv)
    try:
        with args.csv.open(newline="", encoding="utf-8-sig") as lines:
            users = read_users(lines)
        prepared = prepare_audience(users, default_country=args.country)
    except InvalidFile as error:
        shown = error.problems[:_MAX_ERRORS_SHOWN]
        hidden = len(error.problems) - len(shown)
        print("The file cannot be uploaded:", *shown, sep="\n  ", file=sys.stderr)
        if hidden:
            print(f"  ... and {hidden} more", file=sys.stderr)
        return 2
    except ValidationFailed as error:
        print(f"{error.message} {error.remedy or ''}".strip(), file=sys.stderr)
        return 2
    print(prepared.report.model_dump_json(indent=2))
    if args.out is not None:
        with args.out.open("w", encoding="utf-8") as out:
            requests = write_requests(prepared, out, batch_size=args.batch_size)
        print(f"Wrote {requests} request(s), {len(prepared.rows)} row(s), to {args.out}", file=sys.stderr)
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m tools.dry_run",
        description="Show what an audience upload would send, without sending it.",
    )
    parser.add_argument(
        "csv", type=Path, help="CSV with user_id,email,firstName,lastName,phone,score[,country]"
    )
    parser.add_argument("--country", help="store's default country (ISO alpha-2) for national phone numbers")
    parser.add_argument("--out", type=Path, help="write the upload requests as JSON lines to this file")
    parser.add_argument(
        "--batch-size",
        type=int,
        default=MAX_ROWS_PER_CALL,
        choices=range(1, MAX_ROWS_PER_CALL + 1),
        metavar=f"1..{MAX_ROWS_PER_CALL}",
        help="rows per request (default and maximum: %(default)s)",
    )
    return parser


if __name__ == "__main__":
    raise SystemExit(main())
