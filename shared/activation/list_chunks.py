"""A large uploaded list read in chunks of whole records, one chunk a SelectUsers task (issue 20).

A task reads the bytes of its chunk from the object by range, from where the previous chunk ended
(always the start of a record), and carries on past its nominal end to the end of the record there:
the first line break outside a quoted field. Whether a line break is inside a quoted field is told as
Python's csv module reads the file (and the engine, ``activation_load_users``, but for the quotes
``first_misread_quote`` finds, which the step refuses): a quote opens a field
when it follows a comma or a line break; inside a quoted field a quote closes it, and a doubled quote
is a literal one; a quote anywhere else (``ab"c``, ``"ab"c"``) is a literal character of an unquoted
field. A record the engine would refuse (longer than ``RECORD_BYTES``) ends the search: a chunk never
reads more than ``RECORD_BYTES`` (and a line break) past its nominal end, and without a record's end
there raises ``NoRecordEnd`` (an unbalanced quote, or a line with no end). Each chunk is read
``PIECE_BYTES`` at a time, so a task never holds more than that of the file in memory.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, BinaryIO

import numpy as np

# Bytes read from the object per ranged GET (and held at once).
PIECE_BYTES = 8 << 20
# The longest record the engine reads: DuckDB's read_csv refuses a longer one (its max_line_size, which
# counts the line break before a record with it; tests/unit/activation/test_hashing.py holds the engine
# to it). A chunk reads at most this, and a CRLF, past its nominal end: a record with no end there is
# one the whole read refuses too.
RECORD_BYTES = 2_000_000
_PAST_BYTES = RECORD_BYTES + 2
_QUOTE, _NEWLINE, _SPACE = ord('"'), ord("\n"), ord(" ")
# What may come just before a quote that opens a field (or, inside a quoted field, closes it).
_OPENER_BEFORE = np.array([ord(","), ord("\n"), ord("\r")], dtype=np.uint8)

# Reads bytes ``start`` to ``end`` inclusive of the object (a ranged GET).
RangeReader = Callable[[int, int], bytes]


@dataclass(frozen=True)
class CopiedRecords:
    """Where the copied records end (the next chunk's start; the object's size at its end) and how
    many line breaks they hold (the line numbers of later chunks count on from them)."""

    end: int
    lines: int


class NoRecordEnd(Exception):
    """No record ends within ``RECORD_BYTES`` past a chunk's nominal end. ``unbalanced``: a quoted
    field is still open there, opened by the quote at byte ``at`` of the object; else a line runs on
    without a break from byte ``at``. ``lines``: the line breaks from the chunk's start to ``at``."""

    def __init__(self, at: int, lines: int, unbalanced: bool) -> None:
        super().__init__(f"no record ends past byte {at:,} ({'unbalanced quote' if unbalanced else 'line'})")
        self.at, self.lines, self.unbalanced = at, lines, unbalanced


def copy_records(
    read: RangeReader, start: int, target: int, size: int, file: BinaryIO, piece_bytes: int = PIECE_BYTES
) -> CopiedRecords:
    """Copy the object's bytes from ``start`` (the start of a record) into ``file``, up to the end of
    the record holding byte ``target - 1``, or to its end (``size`` bytes) when no line break outside
    a quoted field follows. Reads nothing past ``target + RECORD_BYTES + 2``; raises ``NoRecordEnd``
    when no record ends before it (the engine would refuse that record: the file is not readable)."""
    stop = min(size, max(target, start) + _PAST_BYTES)
    quoted, before, lines, position = False, _NEWLINE, 0, start
    # The quote that opened the field still open (byte, line breaks before it), and where the last
    # line began (the same): what ``NoRecordEnd`` names.
    opened, line_start = (start, 0), (start, 0)
    while position < stop:
        piece = read(position, min(stop, position + piece_bytes) - 1)
        data = np.frombuffer(piece, dtype=np.uint8)
        if position + data.size < stop and data[-1] == _QUOTE:
            # Quotes at the piece's end may go on in the next piece (a doubled quote): read there again.
            other = _last_not_quote(data)
            if other >= 0:
                piece = piece[: other + 1]
                data = data[: len(piece)]
        breaks = np.flatnonzero(data == _NEWLINE)
        starts, inside = _quoted_after(data, before, quoted)
        if position + data.size >= target:
            after = breaks[breaks >= target - 1 - position]
            # Whether a field is open at each break: as after the last run of quotes before it.
            within = np.concatenate(([quoted], inside))[np.searchsorted(starts, after)]
            outside = after[~within]
            if outside.size:
                cut = int(outside[0]) + 1
                file.write(piece[:cut])
                return CopiedRecords(end=position + cut, lines=lines + int(np.searchsorted(breaks, cut)))
        if starts.size:
            was = np.concatenate(([quoted], inside[:-1]))
            opening = np.flatnonzero(inside & ~was)
            if opening.size:
                quote = int(starts[opening[-1]])
                opened = (position + quote, lines + int(np.searchsorted(breaks, quote)))
            quoted = bool(inside[-1])
        if breaks.size:
            line_start = (position + int(breaks[-1]) + 1, lines + int(breaks.size))
        file.write(piece)
        lines += int(breaks.size)
        before = int(data[-1])
        position += data.size
    if stop < size:
        raise NoRecordEnd(*(opened if quoted else line_start), unbalanced=quoted)
    return CopiedRecords(end=size, lines=lines)


def first_long_record(
    read: RangeReader, start: int, size: int, piece_bytes: int = PIECE_BYTES
) -> NoRecordEnd | None:
    """The first record from ``start`` (the start of a record) to the object's end (``size`` bytes) that
    runs on more than ``RECORD_BYTES`` and a CRLF, as ``copy_records`` would name it had a chunk's nominal
    end fallen at its start: a quoted field still open there (the quote that opened it), else where the
    record starts. None when every record is shorter: what the engine refuses for its length, told
    apart from what it refuses for anything else (the whole read's load failed)."""
    quoted, before, lines, position = False, _NEWLINE, 0, start
    opened, record = (start, 0), (start, 0)
    while position < size:
        piece = read(position, min(size, position + piece_bytes) - 1)
        data = np.frombuffer(piece, dtype=np.uint8)
        if position + data.size < size and data[-1] == _QUOTE:
            other = _last_not_quote(data)
            if other >= 0:
                data = data[: other + 1]
        breaks = np.flatnonzero(data == _NEWLINE)
        starts, inside = _quoted_after(data, before, quoted)
        states = np.concatenate(([quoted], inside))
        ends = breaks[~states[np.searchsorted(starts, breaks)]]
        # Each record that starts by this piece's end, and where it ends (the piece's end for the last).
        begins = np.concatenate(([record[0]], position + ends + 1))
        finishes = np.append(position + ends, position + data.size)
        long = np.flatnonzero(finishes - begins > _PAST_BYTES)
        if long.size:
            # Where the bound would stop a chunk whose nominal end is the record's first byte.
            begin = int(begins[long[0]])
            stop = begin + 1 + _PAST_BYTES - position
            at = int(np.searchsorted(starts, stop))
            if states[at]:
                opening = np.flatnonzero(inside[:at] & ~states[:at])
                if opening.size:
                    quote = int(starts[opening[-1]])
                    opened = (position + quote, lines + int(np.searchsorted(breaks, quote)))
                return NoRecordEnd(*opened, unbalanced=True)
            if long[0] > 0:
                end = int(ends[long[0] - 1])
                record = (position + end + 1, lines + int(np.searchsorted(breaks, end)) + 1)
            return NoRecordEnd(*record, unbalanced=False)
        if starts.size:
            opening = np.flatnonzero(inside & ~states[:-1])
            if opening.size:
                quote = int(starts[opening[-1]])
                opened = (position + quote, lines + int(np.searchsorted(breaks, quote)))
            quoted = bool(inside[-1])
        if ends.size:
            record = (position + int(ends[-1]) + 1, lines + int(np.searchsorted(breaks, ends[-1])) + 1)
        lines += int(breaks.size)
        before = int(data[-1])
        position += data.size
    return None


def first_misread_quote(
    read: RangeReader, start: int, size: int, piece_bytes: int = PIECE_BYTES, delimiter: str = ","
) -> tuple[int, int] | None:
    """The first quote from ``start`` (the start of a record) to the object's end (``size`` bytes) that
    the engine reads otherwise than Python's csv module, as ``(byte, line breaks before it)``; None when
    there is none. Two kinds (tests/unit/activation/test_hashing.py holds the engine to them): text after
    the quote that closes a quoted field (``"ab"c``: Python reads ``abc``; the engine drops a character,
    or reads on into the next line), and a quote after a field's one leading space (`` "ab"``: Python
    reads a literal quote, the engine a quoted field, line breaks and all). A quote anywhere else in an
    unquoted field (``ab"c``) both read as a literal character. ``delimiter`` (one ASCII character;
    a shop's file may use ``;`` or a tab) separates fields; the quote is ``"``, doubled inside a field."""
    openers = np.array([ord(delimiter), _NEWLINE, ord("\r")], dtype=np.uint8)
    quoted, before, lines, position, length = False, (_NEWLINE, _NEWLINE), 0, start, piece_bytes
    opened = (start, 0)  # the quote that opened the field still open, as ``(byte, line breaks before)``
    while position < size:
        data = np.frombuffer(read(position, min(size, position + length) - 1), dtype=np.uint8)
        if position + data.size < size and data[-1] == _QUOTE:
            # A run of quotes and the byte after it are read whole: in the next piece, or in a longer
            # one when this one is all quotes.
            other = _last_not_quote(data)
            if other < 0:
                length *= 2
                continue
            data = data[: other + 1]
        length = piece_bytes
        quotes = np.flatnonzero(data == _QUOTE)
        if quotes.size:
            starts, inside = _quoted_after(data, before[1], quoted, openers)
            found = _misread_quote(data, quotes, before, quoted, (starts, inside), openers)
            if found is not None:
                return position + found, lines + int(np.count_nonzero(data[:found] == _NEWLINE))
            opening = np.flatnonzero(inside & ~np.concatenate(([quoted], inside[:-1])))
            if opening.size:
                quote = int(starts[opening[-1]])
                opened = (position + quote, lines + int(np.count_nonzero(data[:quote] == _NEWLINE)))
            if starts.size:
                quoted = bool(inside[-1])
        lines += int(np.count_nonzero(data == _NEWLINE))
        before = (int(data[-2]) if data.size > 1 else before[1], int(data[-1]))
        position += data.size
    return opened if quoted else None


def _misread_quote(
    data: np.ndarray[Any, Any],
    quotes: np.ndarray[Any, Any],
    before: tuple[int, int],
    quoted: bool,
    toggled: tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]],
    openers: np.ndarray[Any, Any],
) -> int | None:
    """Where in ``data`` the first run of quotes ``first_misread_quote`` names starts, or None.
    ``quotes`` are the quotes' places, ``before`` the two bytes before ``data``, ``quoted`` whether a
    field was open, ``toggled`` what ``_quoted_after`` says of ``data``, ``openers`` the bytes that
    end a field (the delimiter and the line breaks)."""
    first = np.ones(quotes.size, dtype=bool)
    first[1:] = quotes[1:] != quotes[:-1] + 1
    runs = np.flatnonzero(first)
    run_starts = quotes[runs]
    lengths = np.diff(np.append(runs, quotes.size))
    run_ends = run_starts + lengths
    # Whether a field is open before each run: as after the last run that opened or closed one.
    starts, inside = toggled
    last = np.searchsorted(starts, run_starts) - 1
    open_before = np.concatenate(([quoted], inside))[last + 1]
    previous = np.where(run_starts > 0, data[np.maximum(run_starts - 1, 0)], before[1])
    second = np.where(
        run_starts > 1, data[np.maximum(run_starts - 2, 0)], np.where(run_starts == 1, before[1], before[0])
    )
    at_field_start = np.isin(previous, openers)
    # A run closes a field (and what follows it must end the field): an odd one in a quoted field, an
    # even one opening a field (an empty quoted field, then doubled quotes).
    closes = np.where(open_before, lengths % 2 == 1, at_field_start & (lengths % 2 == 0))
    after = data[np.minimum(run_ends, data.size - 1)]
    text_after = closes & (run_ends < data.size) & ~np.isin(after, openers)
    one_space = ~open_before & (previous == _SPACE) & np.isin(second, openers)
    misread = np.flatnonzero(text_after | one_space)
    return int(run_starts[misread[0]]) if misread.size else None


def _last_not_quote(data: np.ndarray[Any, Any]) -> int:
    """The place of the last byte of ``data`` that is not a quote; -1 when all are. (The places of all
    the others, ``np.flatnonzero``, took 8 bytes a byte: 64 MiB more for a piece ending in a quote.)"""
    other = data[::-1] != _QUOTE
    last = int(np.argmax(other))
    return data.size - 1 - last if other[last] else -1


def _quoted_after(
    data: np.ndarray[Any, Any], before: int, quoted: bool, openers: np.ndarray[Any, Any] = _OPENER_BEFORE
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """Where each run of quotes of ``data`` that changes anything starts, and whether a quoted field
    is open after it; ``before`` is the byte before ``data``, ``quoted`` whether a field was open,
    ``openers`` the bytes after which a quote opens a field (a comma and the line breaks).

    Adjacent quotes pair off (a doubled quote: close and open again, or two literal quotes), so a run
    of an even number changes nothing and one of an odd number acts as its first quote. A quote after
    a comma or line break opens a field, or closes the open one; any other quote leaves the field
    unquoted (it closes the open one, or is a literal quote in an unquoted field). So after a run the
    field is open when the runs that opened or closed since the last other one are odd in number."""
    quotes = np.flatnonzero(data == _QUOTE)
    if not quotes.size:
        return quotes, np.zeros(0, dtype=bool)
    first = np.ones(quotes.size, dtype=bool)
    first[1:] = quotes[1:] != quotes[:-1] + 1
    runs = np.flatnonzero(first)
    odd = np.diff(np.append(runs, quotes.size)) % 2 == 1
    starts = quotes[runs[odd]]
    previous = np.where(starts > 0, data[np.maximum(starts - 1, 0)], before)
    toggles = np.isin(previous, openers)
    index = np.arange(starts.size)
    last_other = np.maximum.accumulate(np.where(toggles, -1, index))
    count = np.cumsum(toggles)
    since = np.where(last_other >= 0, count - count[np.maximum(last_other, 0)], count + int(quoted))
    return starts, since % 2 == 1
