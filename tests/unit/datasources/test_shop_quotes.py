"""The shop sync's quote scan (``list_chunks.first_misread_quote`` with ``spaced_as_meant``) passes a
record only when DuckDB, which the sync reads values with, reads it as its writer meant; and it passes
the two spaced shapes DuckDB reads so (docs/data-plane.md): one space before a quoted field with no
quote, delimiter or line break in it (``, "a@x.com"``), and spaces between a closing quote and the
delimiter or the line's end (``"a@x.com"  ,``)."""

from __future__ import annotations

import csv
import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared.activation.list_chunks import PIECE_BYTES, MisreadQuote, first_misread_quote
from shared.dataplane.engine import session
from shared.dataplane.reader import Dialect, load

COLUMNS = ["user_id", "email", "first_name"]


def misread(text: str, delimiter: str, *, spaced: bool = True, piece: int = PIECE_BYTES) -> str | None:
    """The cause the scan names in ``text`` (the sync's scan, or with ``spaced`` off a list's), read
    ``piece`` bytes at a time; None when it passes."""
    found = scan(text, delimiter, spaced=spaced, piece=piece)
    return None if found is None else found.cause


def scan(text: str, delimiter: str, *, spaced: bool = True, piece: int = PIECE_BYTES) -> MisreadQuote | None:
    data = text.encode()
    return first_misread_quote(
        lambda start, end: data[start : end + 1], 0, len(data), piece, delimiter, spaced_as_meant=spaced
    )


def meant(record: str, delimiter: str) -> str:
    """``record`` as its writer meant it: without the one space before a quoted field that holds no
    quote, delimiter or line break and is followed by spaces only up to its end (the delimiter, a line
    break or the record's end), nor the spaces between a quoted field's closing quote and its end.
    Read character by character, as a person reads the shapes (the scan reads them with numpy)."""
    ends = (delimiter, "\n", "\r")

    def spaces_to_end(at: int) -> int | None:
        while at < len(record) and record[at] == " ":
            at += 1
        return at if at == len(record) or record[at] in ends else None

    out: list[str] = []
    at, field_start = 0, True
    while at < len(record):
        if field_start and record.startswith(' "', at):
            close = record.find('"', at + 2)
            inside = record[at + 2 : close] if close >= 0 else '"'
            end = spaces_to_end(close + 1) if not any(c in inside for c in ('"', *ends)) else None
            if end is not None:
                out.append(record[at + 1 : close + 1])
                at, field_start = end, False
                continue
        if field_start and record[at] == '"':
            close = record.find('"', at + 1)
            while close >= 0 and record.startswith('""', close):
                close = record.find('"', close + 2)
            if close < 0:
                out.append(record[at:])
                break
            out.append(record[at : close + 1])
            end = spaces_to_end(close + 1)
            at, field_start = (close + 1 if end is None else end), False
            continue
        out.append(record[at])
        at, field_start = at + 1, record[at] in ends
    return "".join(out)


def engine_rows(text: str, delimiter: str) -> list[tuple[str | None, ...]]:
    """The records as the sync's engine loads them (``reader.load``, the customers query)."""
    with session(function_mb=512, threads=1) as workspace:
        path = workspace.path("customers.csv")
        path.write_text(text, encoding="utf-8", newline="")
        load(workspace, "customers", path, Dialect(format="csv", delimiter=delimiter), COLUMNS)
        return workspace.connection.execute(
            "SELECT user_id, email, first_name FROM raw ORDER BY record"
        ).fetchall()


def csv_rows(text: str, delimiter: str) -> tuple[list[tuple[str | None, ...]], list[int]]:
    """The records after the header as the csv module reads them (an empty cell as NULL, as the
    engine's; missing cells NULL, cells past the header's dropped), and the line each ends on (what the
    sync numbers its problems by, ``reader.line_numbers``)."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    next(reader)
    rows, ends = [], []
    for row in reader:
        if row:
            rows.append(tuple(cell or None for cell in (*row, "", "")[:3]))
            ends.append(reader.line_num)
    return rows, ends


TOKENS = ["a", "b", "@", "{d}", '"', '""', " ", "  ", "\t", "\n", "\r\n", '"a@x.com"', ' "a"', '"a"  ']


@settings(max_examples=120, derandomize=True, database=None, deadline=None)
@given(
    delimiter=st.sampled_from([",", ";", "\t"]),
    records=st.lists(st.lists(st.sampled_from(TOKENS), min_size=1, max_size=8), min_size=1, max_size=40),
)
def test_a_record_the_sync_s_scan_passes_is_read_by_the_engine_as_its_writer_meant(
    delimiter: str, records: list[list[str]]
) -> None:
    # Given random records of letters, delimiters, quotes, spaces, tabs and line breaks, those the
    # sync's scan passes (each scanned alone, from a record's start), in one file
    texts = [
        f"u{i}{delimiter}" + "".join(records[i]).replace("{d}", delimiter) + "\n" for i in range(len(records))
    ]
    kept = [text for text in texts if misread(text, delimiter) is None]
    header = delimiter.join(COLUMNS) + "\n"

    # When the engine loads the file
    read = engine_rows(header + "".join(kept), delimiter)

    # Then it reads what the csv module reads of the records as their writers meant them, record for
    # record, and the csv module, which numbers the sync's lines, ends each record on the same line
    as_meant, meant_ends = csv_rows(header + "".join(meant(text, delimiter) for text in kept), delimiter)
    assert read == as_meant
    assert csv_rows(header + "".join(kept), delimiter)[1] == meant_ends


@pytest.mark.parametrize("delimiter", [",", ";", "\t"])
@pytest.mark.parametrize(
    ("field", "value"),
    [
        (' "a@x.com"', "a@x.com"),  # one space before a quoted field
        ('"a@x.com"  ', "a@x.com"),  # spaces after its closing quote
        (' "a@x.com" ', "a@x.com"),  # both
        ('"a,b"  ', "a,b"),  # a quoted field holding a delimiter, then spaces
        (' ""', None),  # an empty quoted field after a space
    ],
)
def test_the_spaced_shapes_pass_the_sync_s_scan_and_are_read_as_meant(
    delimiter: str, field: str, value: str | None
) -> None:
    # Given a record with the field in the middle, and one with it last on its line
    field, value = field.replace(",", delimiter), value and value.replace(",", delimiter)
    text = (
        delimiter.join(COLUMNS) + f"\nu1{delimiter}{field}{delimiter}Ann\nu2{delimiter}Bo{delimiter}{field}\n"
    )
    # When the sync's scan, and a list's, read it, and the engine loads it
    found = misread(text, delimiter), misread(text, delimiter, spaced=False)
    # Then the sync's passes it (a list's refuses it), and the engine reads the value meant
    assert found[0] is None
    assert found[1] is not None
    assert engine_rows(text, delimiter) == [("u1", value, "Ann"), ("u2", "Bo", value)]


@pytest.mark.parametrize(
    ("record", "cause"),
    [
        ('u1, "a,b",Ann\n', "quote_after_space"),  # a delimiter inside: the csv module ends the field there
        ('u1, "a\nb",Ann\n', "quote_after_space"),  # a line break inside: the records part
        ('u1, "a""b",Ann\n', "quote_after_space"),  # a quote inside
        ('u1, "a" x,Ann\n', "quote_after_space"),  # text after the closing quote
        ('u1,  "a",Ann\n', None),  # two spaces: both read a literal quote (as before)
        ('u1,"a"\t,Ann\n', "text_after_closing_quote"),  # a tab, not a space, after the closing quote
        ('u1,"a"  "b",Ann\n', "text_after_closing_quote"),  # spaces, then more text
        ('u1,"a" x,Ann\n', "text_after_closing_quote"),
    ],
)
def test_the_sync_s_scan_still_names_every_other_shape(record: str, cause: str | None) -> None:
    assert misread("user_id,email,first_name\n" + record, ",") == cause


@pytest.mark.parametrize("piece", [17, 23, 40, 64])
def test_the_sync_s_scan_gives_one_verdict_whatever_the_pieces_its_lines_fit_in(piece: int) -> None:
    # Given a file whose records are at most 15 bytes, with the spaced shapes across the pieces' ends, then
    # (line 9) text after a closing quote
    lines = ['u1, "a@x.com"', 'u2,"b@x.c"   ', 'u3, "c"  ,Al', 'u4,"d"  ,  Bo', 'u5, ""', 'u6,"e"        ']
    spaced = "user_id,email,first_name\n" + "\n".join(lines) + "\n"
    named = spaced + 'u7,Cy\nu8,"f"x\n'
    # When the sync's scan reads each a piece at a time
    found = scan(spaced, ",", piece=piece), scan(named, ",", piece=piece)
    # Then the first passes, and the second is named at the same byte as read whole
    whole = scan(named, ",")
    assert found[0] is None
    assert whole is not None
    assert (whole.lines, whole.cause) == (8, "text_after_closing_quote")
    assert found[1] == whole


def test_in_a_line_longer_than_a_piece_a_spaced_field_the_piece_s_end_cuts_is_named() -> None:
    # Given a line of 22 bytes whose closing quote's spaces run past the end of a 16-byte piece (the
    # sync's lines, at most 2 MiB, always fit its 8 MiB pieces)
    text = 'u1,"a@x.com"         ,Al\n'
    # When the sync's scan reads it whole, and 16 bytes at a time
    found = scan(text, ","), scan(text, ",", piece=16)
    # Then read whole it passes; cut, the quote is named, since what follows it is not seen
    assert found[0] is None
    assert found[1] is not None
    assert (found[1].at, found[1].cause) == (11, "text_after_closing_quote")
