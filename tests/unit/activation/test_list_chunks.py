"""A large list is read in chunks of whole records (``shared.activation.list_chunks``): every chunk
starts where a record starts, as Python's csv module reads the file, wherever the nominal cut falls
(in a quoted field with line breaks, commas and doubled quotes, in a CRLF pair, on a piece's edge)."""

from __future__ import annotations

import csv
import io

import pytest

from shared.activation.list_chunks import copy_records

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


def test_a_quote_inside_an_unquoted_field_makes_the_chunk_run_to_the_end() -> None:
    # Given a list where a quote stands inside an unquoted field (a literal quote to Python's csv)
    data = b'user_id,firstName\nu1,Ana\nu2,Jo"e\nu3,"two\nlines"\n' + b"u9,Zed\n" * 50

    # When it is cut into chunks of a few bytes
    header, *rest = chunks_of(data, 5, 1 << 20)

    # Then the chunks before it are cut at records, and the chunk holding it runs to the end
    assert rest[-1].startswith(b'u2,Jo"e\n')
    assert rest[-1].endswith(b"u9,Zed\n")
    assert [record for part in rest for record in records(header + part)[1:]] == records(data)[1:]


def test_a_file_without_a_line_break_after_the_cut_is_one_chunk() -> None:
    # Given a list whose last record has no line break
    data = b"user_id\nu1\nu2"

    # When, then
    assert chunks_of(data, 1, 4) == [b"user_id\n", b"u1\n", b"u2"]
