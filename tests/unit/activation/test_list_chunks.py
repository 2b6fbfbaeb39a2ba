"""A large list is read in chunks of whole records (``shared.activation.list_chunks``): every chunk
starts where a record starts, as Python's csv module reads the file, wherever the nominal cut falls
(in a quoted field with line breaks, commas and doubled quotes, in a CRLF pair, on a piece's edge, after
a literal quote), and never more than a record past its nominal end."""

from __future__ import annotations

import csv
import io
import random

import pytest

from shared.activation.list_chunks import (
    RECORD_BYTES,
    MisreadCause,
    NoRecordEnd,
    copy_records,
    first_long_record,
    first_misread_quote,
)

TRICKY = (
    b"user_id,email,firstName\r\n"
    b"u1,a@example.com,Ana\r\n"
    b'u2,"b@example.com","Line one\nline two, ""quoted"""\r\n'
    b'u3,c@example.com,"O""Brien"\r\n'
    b'"u4","d@example.com","\r\n\r\n"\n'
    b'u5,,"comma, inside"\n'
    b"u6,e@example.com,Eve\n"
) * 7


def chunks_of(data: bytes, chunk: int, piece: int) -> list[bytes]:
    """The file cut as SelectUsers cuts it: the header's record, then chunks of ``chunk`` bytes."""
    read = lambda start, end: data[start : end + 1]  # noqa: E731 (a ranged GET)
    header = io.BytesIO()
    start = copy_records(read, 0, 1, len(data), header, piece).end
    cut = [header.getvalue()]
    while start < len(data):
        out = io.BytesIO()
        copied = copy_records(read, start, start + chunk, len(data), out, piece)
        assert copied.lines == out.getvalue().count(b"\n")
        cut.append(out.getvalue())
        start = copied.end
    return cut


def records(text: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text.decode(), newline="")))


@pytest.mark.parametrize("chunk", [1, 7, 30, 61, 200])
@pytest.mark.parametrize("piece", [3, 16, 1 << 20])
def test_every_chunk_holds_whole_records_wherever_the_cut_falls(chunk: int, piece: int) -> None:
    # Given a CSV whose quoted fields hold line breaks, CRLF pairs, commas and doubled quotes
    # When it is cut into chunks
    cut = chunks_of(TRICKY, chunk, piece)

    # Then the chunks join into the file, and the header plus each chunk reads as the file's records
    # in order: no record is split between two chunks
    assert b"".join(cut) == TRICKY
    header, *rest = cut
    read = [record for part in rest for record in records(header + part)[1:]]
    assert read == records(TRICKY)[1:]
    assert len(rest) > 1 or chunk == 200


def test_a_quote_inside_an_unquoted_field_is_a_literal_and_the_chunks_are_still_cut_at_records() -> None:
    # Given a list where quotes stand inside unquoted fields and after a closed quoted field (literal
    # quotes to Python's csv and to the engine: the whole read takes those rows as they are)
    data = b'user_id,firstName\nu1,Ana\nu2,Jo"e\nu3,"two\nlines"\nu4,"Al"i"\nu5,ab""c\n' + b"u9,Zed\n" * 50

    # When it is cut into chunks of a few bytes
    header, *rest = chunks_of(data, 5, 1 << 20)

    # Then every chunk after them is cut at a record too (none runs on to the end of the file), and
    # they read as the file's records
    assert rest[1:4] == [b'u2,Jo"e\n', b'u3,"two\nlines"\n', b'u4,"Al"i"\n']
    assert rest[-2:] == [b"u9,Zed\n", b"u9,Zed\n"]
    assert [record for part in rest for record in records(header + part)[1:]] == records(data)[1:]


def _fields(rng: random.Random) -> str:
    return rng.choice(
        [
            "Ana",
            "",
            '"a, b"',
            '"x\ny"',
            'Jo"e',
            'ab""c',
            '"O""Brien"',
            '""',
            '""""',
            '"a"b"c',
            '"\r\n"',
            '"""q"""',
        ]
    )


@pytest.mark.parametrize("seed", range(6))
def test_chunks_of_a_list_with_quotes_of_every_kind_read_as_the_whole_file(seed: int) -> None:
    # Given a list of random fields: quoted, with line breaks, doubled quotes, runs of quotes, and
    # literal quotes inside unquoted fields and after closed quoted ones, with LF or CRLF line ends
    rng = random.Random(seed)
    rows = [f"u{i},{_fields(rng)},{_fields(rng)}" for i in range(300)]
    data = ("user_id,a,b\r\n" + "".join(row + rng.choice(["\n", "\r\n"]) for row in rows)).encode()

    for chunk, piece in [(1, 2), (17, 5), (64, 1 << 20), (300, 7)]:
        # When it is cut into chunks
        header, *rest = chunks_of(data, chunk, piece)

        # Then the header and each chunk read as the file's records, in order
        assert b"".join([header, *rest]) == data
        assert [record for part in rest for record in records(header + part)[1:]] == records(data)[1:]


@pytest.mark.parametrize(("chunk", "piece"), [(1, 2), (1, 3), (5, 2), (2, 4)])
def test_a_run_of_quotes_longer_than_a_piece_is_read_whole_and_the_chunks_are_cut_at_records(
    chunk: int, piece: int
) -> None:
    # Given a list whose quoted fields hold runs of quotes longer than the pieces it is read in (before,
    # a piece of quotes only was read as a run of its own: the first chunk was cut inside "\nx")
    data = b'user_id,a\r\nu1,"""""""\nx"""\r\nu2,""""""""\r\nu3,"a\n""""""""""",b\r\nu4,c\n'

    # When it is cut into chunks
    header, *rest = chunks_of(data, chunk, piece)

    # Then each chunk is a whole record, read as the file's records
    assert rest == [b'u1,"""""""\nx"""\r\n', b'u2,""""""""\r\n', b'u3,"a\n""""""""""",b\r\n', b"u4,c\n"]
    assert [record for part in rest for record in records(header + part)[1:]] == records(data)[1:]


class _Reads:
    """A ranged GET over ``data`` that remembers the furthest byte asked for."""

    def __init__(self, data: bytes) -> None:
        self.data, self.furthest = data, -1

    def __call__(self, start: int, end: int) -> bytes:
        self.furthest = max(self.furthest, end)
        return self.data[start : end + 1]


def test_an_unbalanced_quote_stops_the_chunk_a_record_past_its_end_naming_where_the_quote_opens() -> None:
    # Given a list where a quoted field opens on line 3 and never closes (the engine reading the whole
    # file refuses that record: longer than it reads)
    data = b'user_id,firstName\nu1,Ana\nu2,"Jo\n' + b"u3,Zed\n" * 600_000
    opens = data.index(b'"Jo')
    reads = _Reads(data)

    # When a chunk starting after the header is cut 10 bytes on
    with pytest.raises(NoRecordEnd) as raised:
        copy_records(reads, 18, 28, len(data), io.BytesIO(), 1 << 20)

    # Then it reads no further than a record (and its CRLF) past that, and names the quote's byte, the
    # line breaks before it from the chunk's start, and the reason
    assert reads.furthest < 28 + RECORD_BYTES + 2
    assert reads.furthest > 28 + RECORD_BYTES - (1 << 20)
    assert (raised.value.at, raised.value.lines, raised.value.unbalanced) == (opens, 1, True)


def test_a_line_longer_than_a_record_past_the_cut_stops_the_chunk() -> None:
    # Given a list whose line 3 runs on for more than the engine reads, with no quote open
    data = b"user_id,firstName\nu1,Ana\nu2," + b"x" * (RECORD_BYTES + 100) + b"\nu3,Zed\n"
    reads = _Reads(data)

    # When a chunk is cut inside that line
    with pytest.raises(NoRecordEnd) as raised:
        copy_records(reads, 18, 40, len(data), io.BytesIO(), 1 << 20)

    # Then it stops there, naming where the line starts
    assert reads.furthest < 40 + RECORD_BYTES + 2
    assert (raised.value.at, raised.value.lines, raised.value.unbalanced) == (data.index(b"u2,"), 1, False)


def test_an_unbalanced_quote_in_the_last_chunk_runs_to_the_end_as_the_whole_read_does() -> None:
    # Given a short list whose last lines are inside a quoted field that never closes (one record to
    # Python's csv and to the engine)
    data = b'user_id,firstName\nu1,Ana\nu2,"Jo\nu3,Zed\n'

    # When, then: the chunk holding it holds the rest of the file
    assert chunks_of(data, 5, 4) == [b"user_id,firstName\n", b"u1,Ana\n", b'u2,"Jo\nu3,Zed\n']


def test_a_file_without_a_line_break_after_the_cut_is_one_chunk() -> None:
    # Given a list whose last record has no line break
    data = b"user_id\nu1\nu2"

    # When, then
    assert chunks_of(data, 1, 4) == [b"user_id\n", b"u1\n", b"u2"]


def _long(data: bytes, piece: int = 1 << 20) -> tuple[int, int, bool] | None:
    found = first_long_record(lambda start, end: data[start : end + 1], 0, len(data), piece)
    return None if found is None else (found.at, found.lines, found.unbalanced)


def _bound_at(data: bytes, record: bytes) -> tuple[int, int, bool]:
    """What a chunk whose nominal end is the first byte of ``record`` raises."""
    start = data.index(record)
    with pytest.raises(NoRecordEnd) as raised:
        copy_records(lambda s, e: data[s : e + 1], start, start + 1, len(data), io.BytesIO())
    return raised.value.at - start, raised.value.lines, raised.value.unbalanced


@pytest.mark.parametrize("piece", [3 << 10, 1 << 20, 8 << 20])
def test_a_record_longer_than_the_bound_is_found_in_a_whole_file_as_a_chunk_names_it(piece: int) -> None:
    # Given lists with, on line 3, a quote that never closes, a quoted field a little longer than the
    # bound that does close, or a line with no quote that long; and lists whose records all fit
    header = b"user_id,firstName\r\n" + b'u1,"O""Brien"\r\n' + b'u0,"x\ny"\r\n' * 3
    after = b"u3,Zed\r\n" * 400_000
    unclosed = header + b'u2,"Jo\r\n' + after
    closed = header + b'u2,"Jo' + b"\n" * (RECORD_BYTES + 10) + b'"\r\n' + b"u3,Zed\r\n"
    line = header + b"u2," + b"x" * (RECORD_BYTES + 10) + b"\r\nu3,Zed\r\n"
    longest = header + b'u2,"' + b"x" * (RECORD_BYTES - 4) + b'"\r\n' + after
    too_long = header + b'u2,"' + b"x" * (RECORD_BYTES - 3) + b'"\r\n' + after
    quote = len(header) + 3

    # When each is scanned whole, then the first long record is named by the quote still open where a
    # chunk's bound would stop (its byte, the line breaks before it), or where the line starts, as a
    # chunk cut at that record's start names it
    assert _long(unclosed, piece) == (quote, 8, True)
    assert _long(closed, piece) == (quote, 8, True)
    assert _long(line, piece) == (len(header), 8, False)
    for data in (unclosed, closed, line, too_long):
        at, lines, unbalanced = _bound_at(data, b"u2,")
        assert _long(data, piece) == (at + len(header), lines + 8, unbalanced)
    assert _long(longest, piece) is None
    assert _long(too_long, piece) == (len(header), 8, False)
    assert _long(TRICKY * 7, piece) is None


_QUOTED_HEAD = b'user_id,firstName\r\nu1,"O""Brien"\r\n'


@pytest.mark.parametrize("piece", [1, 2, 3, 16, 1 << 20])
@pytest.mark.parametrize(
    ("rows", "named", "cause"),
    [
        (b'u2,"ab"c\r\nu3,Zed\r\n', 6, "text_after_closing_quote"),  # text after the closing quote
        (b'u2,"ab" \r\nu3,Zed\r\n', 6, "text_after_closing_quote"),  # a space after it
        (b'u2,""x\r\nu3,Zed\r\n', 3, "text_after_closing_quote"),  # an empty quoted field, then text
        (b'u2,"a""b"c\r\nu3,Zed\r\n', 8, "text_after_closing_quote"),  # after a doubled quote, the last
        (b'u2, "Al\nx"\r\nu3,Zed\r\n', 4, "quote_after_space"),  # a quote after a field's one leading space
        (b' "u2",Al\r\n', 1, "quote_after_space"),  # at a line's start too
        (b'u2,"Jo\r\nu3,Zed\r\n', 3, "unclosed"),  # a quoted field that never closes
        (b'u2,ab"c,Jo "Jo" Jo\r\nu3,"x""y",  "Al\r\nu4,"ab"\ru5,"""q"""\r\nu6,"a"', None, None),
    ],
)
def test_a_quote_the_engine_reads_otherwise_is_named_by_byte_line_and_cause_whatever_the_pieces(
    rows: bytes, named: int | None, cause: MisreadCause | None, piece: int
) -> None:
    # Given lists whose line 3 holds a quote the engine reads otherwise than Python's csv module, and
    # one whose quotes both read alike (literal in an unquoted field, after two spaces, doubled, closing
    # before a comma, a line break or the end)
    data = _QUOTED_HEAD + rows

    # When it is scanned a piece at a time
    found = first_misread_quote(lambda start, end: data[start : end + 1], 0, len(data), piece)

    # Then the first such quote is named by its byte, the line breaks before it and the cause, or none
    expected = None if named is None else (len(_QUOTED_HEAD) + named, 2, cause)
    assert (None if found is None else (found.at, found.lines, found.cause)) == expected
