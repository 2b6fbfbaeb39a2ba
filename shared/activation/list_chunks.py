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
``PIECE_BYTES`` at a time (``_Scan``, which all three scans read through), so a task never holds
more than that of the file in memory, but for a run of quotes longer than a piece: a run is read whole.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO, Literal

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


# Why ``first_misread_quote`` names a quote: text after the quote that closes a quoted field, a quote
# after a field's one leading space, or a quoted field still open at the end of the file.
MisreadCause = Literal["text_after_closing_quote", "quote_after_space", "unclosed"]
# Each cause in words, and how to fix it (the start of a remedy: each caller says what to do then).
_MISREAD_WORDS: dict[MisreadCause, tuple[str, str]] = {
    "text_after_closing_quote": (
        "text follows the quote that closes a quoted field",
        'quote the whole field and double each quote inside it ("ab""c" for ab"c)',
    ),
    "quote_after_space": (
        "a field starts with a space and then a quote",
        "remove the space before the quote (or, to keep the space, quote the whole field and double each "
        "quote inside it)",
    ),
    "unclosed": (
        "it opens a quoted field that does not close before the end of the file",
        "close the quoted field (or, if the quote is part of the value, quote the whole field and double "
        "each quote inside it)",
    ),
}


@dataclass(frozen=True)
class MisreadQuote:
    """A quote the engine reads otherwise than Python's csv module (``first_misread_quote``): at byte
    ``at`` of the object, after ``lines`` line breaks, and why (``cause``)."""

    at: int
    lines: int
    cause: MisreadCause

    @property
    def reason(self) -> str:
        """The cause in words, for a message ("... that CSV readers read differently: <reason>.")."""
        return _MISREAD_WORDS[self.cause][0]

    @property
    def fix(self) -> str:
        """How to fix the quoting, in words that begin a remedy's sentence ("Fix the quoting on that
        line: <fix>; ...")."""
        return _MISREAD_WORDS[self.cause][1]


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
    scan = _Scan(read, start, stop, piece_bytes)
    line_start = (start, 0)  # where the last line began, as ``(byte, line breaks before)``
    for piece in scan:
        breaks = piece.breaks
        if piece.at + piece.data.size >= target:
            after = breaks[breaks >= target - 1 - piece.at]
            outside = after[~piece.open_at(after)]
            if outside.size:
                cut = int(outside[0]) + 1
                file.write(piece.data[:cut].data)
                return CopiedRecords(
                    end=piece.at + cut, lines=piece.lines + int(np.searchsorted(breaks, cut))
                )
        if breaks.size:
            line_start = (piece.at + int(breaks[-1]) + 1, piece.lines + int(breaks.size))
        file.write(piece.data.data)
    if stop < size:
        raise NoRecordEnd(*(scan.opened if scan.quoted else line_start), unbalanced=scan.quoted)
    return CopiedRecords(end=size, lines=scan.lines)


def first_long_record(
    read: RangeReader, start: int, size: int, piece_bytes: int = PIECE_BYTES
) -> NoRecordEnd | None:
    """The first record from ``start`` (the start of a record) to the object's end (``size`` bytes) that
    runs on more than ``RECORD_BYTES`` and a CRLF, as ``copy_records`` would name it had a chunk's nominal
    end fallen at its start: a quoted field still open there (the quote that opened it), else where the
    record starts. None when every record is shorter: what the engine refuses for its length, told
    apart from what it refuses for anything else (the whole read's load failed)."""
    scan = _Scan(read, start, size, piece_bytes)
    record = (start, 0)  # where the last record began, as ``(byte, line breaks before)``
    for piece in scan:
        breaks = piece.breaks
        ends = breaks[~piece.open_at(breaks)]
        # Each record that starts by this piece's end, and where it ends (the piece's end for the last).
        begins = np.concatenate(([record[0]], piece.at + ends + 1))
        finishes = np.append(piece.at + ends, piece.at + piece.data.size)
        long = np.flatnonzero(finishes - begins > _PAST_BYTES)
        if long.size:
            # Where the bound would stop a chunk whose nominal end is the record's first byte.
            begin = int(begins[long[0]])
            stop = begin + 1 + _PAST_BYTES - piece.at
            toggles = int(np.searchsorted(piece.toggles[0], stop))
            if piece.open_after(toggles):
                return NoRecordEnd(*(piece.opened(toggles) or scan.opened), unbalanced=True)
            if long[0] > 0:
                end = int(ends[long[0] - 1])
                record = (piece.at + end + 1, piece.lines + int(np.searchsorted(breaks, end)) + 1)
            return NoRecordEnd(*record, unbalanced=False)
        if ends.size:
            record = (piece.at + int(ends[-1]) + 1, piece.lines + int(np.searchsorted(breaks, ends[-1])) + 1)
    return None


def first_misread_quote(
    read: RangeReader,
    start: int,
    size: int,
    piece_bytes: int = PIECE_BYTES,
    delimiter: str = ",",
    *,
    spaced_as_meant: bool = False,
) -> MisreadQuote | None:
    """The first quote from ``start`` (the start of a record) to the object's end (``size`` bytes) that
    the engine reads otherwise than Python's csv module (``MisreadQuote``: its byte, the line breaks
    before it, the cause); None when there is none. Two kinds (tests/unit/activation/test_hashing.py
    holds the engine to them): text after the quote that closes a quoted field (``"ab"c``: Python reads
    ``abc``; the engine drops a character, or reads on into the next line), and a quote after a field's
    one leading space (`` "ab"``: Python reads a literal quote, the engine a quoted field, line breaks
    and all). A quote anywhere else in an unquoted field (``ab"c``) both read as a literal character.
    A quoted field still open at the end is named too (cause ``unclosed``: its opening quote).
    ``delimiter`` (one ASCII character; a shop's file may use ``;`` or a tab) separates fields; the
    quote is ``"``, doubled inside a field.

    ``spaced_as_meant`` (the shop sync, which reads values from the engine only) passes the two shapes
    of those DuckDB reads as the writer meant (docs/data-plane.md): one space before a quoted field
    that holds no quote, delimiter or line break (``, "a@x.com"``: DuckDB ``a@x.com``), and spaces
    only (no tab) between a quote that closes a field and the delimiter, the line's end or the file's
    (``"a@x.com"  ,``: DuckDB ``a@x.com``); both together too. Python's csv module keeps the space
    and the quotes, or the spaces, of such a cell, but ends its record where DuckDB does. A list keeps
    refusing them: its snapshot is the csv module's reading. The pieces then end at a line break, so
    a field is judged whole; in a line longer than a piece, a field cut by the piece's end is named."""
    openers = np.array([ord(delimiter), _NEWLINE, ord("\r")], dtype=np.uint8)
    spaced = spaced_as_meant and delimiter != " "
    scan = _Scan(read, start, size, piece_bytes, openers, whole_lines=spaced)
    for piece in scan:
        if piece.quotes.size:
            found = _misread_quote(piece, spaced=spaced)
            if found is not None:
                at, cause = found
                return MisreadQuote(piece.at + at, piece.lines + piece.breaks_before(at), cause)
    return MisreadQuote(*scan.opened, "unclosed") if scan.quoted else None


class _Scan:
    """The object's bytes from ``start`` to ``stop``, read ``piece_bytes`` at a time (each piece a
    ranged GET), and what is known after the pieces read so far: whether a quoted field is open
    (``quoted``), the quote that opened the last one to open (``opened``, as ``(byte, line breaks
    before)``) and the line breaks read (``lines``). Iterating yields each piece (``_Piece``, with what
    was known before it); the state moves past a piece when the next one is asked for.

    A run of quotes at a piece's end may go on in the next piece (a doubled quote), so it is left to
    the next piece with the byte after it, and a piece that is all quotes is read again twice as long
    (a run of quotes is always read whole, and with the byte after it). ``openers`` are the bytes
    after which a quote opens a field: the delimiter and the line breaks."""

    def __init__(
        self,
        read: RangeReader,
        start: int,
        stop: int,
        piece_bytes: int,
        openers: np.ndarray[Any, Any] = _OPENER_BEFORE,
        whole_lines: bool = False,
    ) -> None:
        self._read, self._start, self._stop, self._piece_bytes = read, start, stop, piece_bytes
        self._openers, self._whole_lines = openers, whole_lines
        self.quoted, self.opened, self.lines = False, (start, 0), 0

    def __iter__(self) -> Iterator[_Piece]:
        position, length, before = self._start, self._piece_bytes, (_NEWLINE, _NEWLINE)
        while position < self._stop:
            raw = self._read(position, min(self._stop, position + length) - 1)
            data = np.frombuffer(raw, dtype=np.uint8)
            if self._whole_lines and position + data.size < self._stop:
                # End at the last line break, so that a field and what follows it on its line are
                # judged in one piece (a line longer than a piece goes on as below).
                line_end = raw.rfind(b"\n")
                data = data[: line_end + 1] if line_end >= 0 else data
            if position + data.size < self._stop and data[-1] == _QUOTE:
                other = _last_not_quote(data)
                if other < 0:
                    length *= 2
                    continue
                data = data[: other + 1]
            length = self._piece_bytes
            piece = _Piece(position, data, before, self.quoted, self.lines, self._openers)
            piece.last = position + data.size >= self._stop
            yield piece
            if piece.quotes.size:
                self.opened = piece.opened() or self.opened
                self.quoted = piece.open_after(len(piece.toggles[0]))
            self.lines += piece.breaks_before(data.size)
            before = (int(data[-2]) if data.size > 1 else before[1], int(data[-1]))
            position += data.size


class _Piece:
    """A piece of the object from byte ``at`` (``data``), and what was known before it: the two bytes
    before it (line breaks before the object's start), whether a quoted field was open (``quoted``) and
    the line breaks before it (``lines``). Its quotes, line breaks and quoted fields are found when first
    asked for."""

    def __init__(
        self,
        at: int,
        data: np.ndarray[Any, Any],
        before: tuple[int, int],
        quoted: bool,
        lines: int,
        openers: np.ndarray[Any, Any],
    ) -> None:
        self.at, self.data, self.before, self.quoted, self.lines = at, data, before, quoted, lines
        self.openers = openers
        self.last = True  # whether the piece ends where the scan stops (the scan says)
        # Found when first asked for (a scan that counts line breaks need not place them).
        self._quotes: np.ndarray[Any, Any] | None = None
        self._breaks: np.ndarray[Any, Any] | None = None
        self._toggles: tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]] | None = None

    @property
    def quotes(self) -> np.ndarray[Any, Any]:
        """The places of the piece's quotes."""
        if self._quotes is None:
            self._quotes = np.flatnonzero(self.data == _QUOTE)
        return self._quotes

    @property
    def breaks(self) -> np.ndarray[Any, Any]:
        """The places of the piece's line breaks."""
        if self._breaks is None:
            self._breaks = np.flatnonzero(self.data == _NEWLINE)
        return self._breaks

    @property
    def toggles(self) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
        """Where each run of quotes that changes anything starts, and whether a quoted field is open
        after it (``_quoted_after``)."""
        if self._toggles is None:
            self._toggles = _quoted_after(self.data, self.before[1], self.quoted, self.openers, self.quotes)
        return self._toggles

    def breaks_before(self, place: int) -> int:
        """The line breaks in the piece before ``place``."""
        if self._breaks is not None:
            return int(np.searchsorted(self._breaks, place))
        return int(np.count_nonzero(self.data[:place] == _NEWLINE))

    def open_after(self, toggles: int) -> bool:
        """Whether a quoted field is open after the first ``toggles`` runs of ``toggles``."""
        return bool(self.toggles[1][toggles - 1]) if toggles else self.quoted

    def open_at(self, places: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        """Whether a quoted field is open at each of ``places`` (ascending): as after the last run of
        quotes before it."""
        starts, inside = self.toggles
        return np.concatenate(([self.quoted], inside))[np.searchsorted(starts, places)]

    def opened(self, toggles: int | None = None) -> tuple[int, int] | None:
        """The quote that opened a field last among the first ``toggles`` runs of ``toggles`` (all of
        them by default), as ``(byte of the object, line breaks before it)``; None when none did."""
        starts, inside = self.toggles
        inside = inside[:toggles]
        opening = np.flatnonzero(inside & ~np.concatenate(([self.quoted], inside[:-1])))
        if not opening.size:
            return None
        quote = int(starts[opening[-1]])
        return self.at + quote, self.lines + self.breaks_before(quote)


def _misread_quote(piece: _Piece, *, spaced: bool = False) -> tuple[int, MisreadCause] | None:
    """Where in the piece the first run of quotes ``first_misread_quote`` names starts, and why; None
    when there is none. ``spaced``: but for the spaced shapes DuckDB reads as meant (``_as_meant``)."""
    data, quotes, before, openers = piece.data, piece.quotes, piece.before, piece.openers
    first = np.ones(quotes.size, dtype=bool)
    first[1:] = quotes[1:] != quotes[:-1] + 1
    runs = np.flatnonzero(first)
    run_starts = quotes[runs]
    lengths = np.diff(np.append(runs, quotes.size))
    run_ends = run_starts + lengths
    # Whether a field is open before each run: as after the last run that opened or closed one.
    open_before = piece.open_at(run_starts)
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
    flagged = text_after | one_space
    if spaced and flagged.any():
        flagged &= ~_as_meant(piece, run_starts, lengths, text_after, one_space)
    misread = np.flatnonzero(flagged)
    if not misread.size:
        return None
    named = misread[0]
    return int(run_starts[named]), "text_after_closing_quote" if text_after[named] else "quote_after_space"


def _as_meant(
    piece: _Piece,
    run_starts: np.ndarray[Any, Any],
    lengths: np.ndarray[Any, Any],
    text_after: np.ndarray[Any, Any],
    one_space: np.ndarray[Any, Any],
) -> np.ndarray[Any, Any]:
    """Which runs of quotes flagged ``text_after`` or ``one_space`` DuckDB reads as the writer meant:
    after the quote that closes the field come spaces only, then a delimiter, a line break or the
    file's end; and for a field opened after one space (``one_space``), that field is ``""`` or one
    quote, text without a quote, delimiter or line break, and one quote."""
    data = piece.data
    closed_at = np.full(run_starts.size, -1, dtype=np.int64)  # the byte after the closing quote
    after_text = np.flatnonzero(text_after)
    closed_at[after_text] = run_starts[after_text] + lengths[after_text]
    empty = np.flatnonzero(one_space & (lengths == 2))
    closed_at[empty] = run_starts[empty] + 2
    # A quote, then the next run of quotes a single quote with no delimiter or line break between.
    opened = np.flatnonzero(one_space[:-1] & (lengths[:-1] == 1) & (lengths[1:] == 1))
    if opened.size:
        ends = run_starts[opened + 1]
        bounds = np.column_stack([run_starts[opened] + 1, ends]).ravel()
        # (Comparisons, not np.isin: that widens a piece's bytes to 8 bytes each.)
        is_opener = data == piece.openers[0]
        for opener in piece.openers[1:]:
            is_opener |= data == opener
        crossed = np.logical_or.reduceat(is_opener, bounds)[::2]
        whole = opened[~crossed]
        closed_at[whole] = run_starts[whole + 1] + 1
    candidates = np.flatnonzero(closed_at >= 0)
    meant = np.zeros(run_starts.size, dtype=bool)
    meant[candidates] = _spaces_then_field_end(data, closed_at[candidates], piece.openers, piece.last)
    return meant


def _spaces_then_field_end(
    data: np.ndarray[Any, Any], places: np.ndarray[Any, Any], openers: np.ndarray[Any, Any], last: bool
) -> np.ndarray[Any, Any]:
    """Whether the bytes of ``data`` from each of ``places`` are spaces (or none), then a byte of
    ``openers``, or the end of ``data`` when it is the end of the file (``last``). A step a byte for
    all places at once, then a place at a time for the few with 8 spaces or more."""
    found = np.zeros(places.size, dtype=bool)
    todo, at = np.arange(places.size), places.astype(np.int64)
    for _ in range(8):
        past = at >= data.size
        found[todo[past]] = last
        todo, at = todo[~past], at[~past]
        byte = data[at]
        found[todo[np.isin(byte, openers)]] = True
        spaces = byte == _SPACE
        todo, at = todo[spaces], at[spaces] + 1
    for index, place in zip(todo.tolist(), at.tolist(), strict=True):
        end = _first_not_space(data, place)
        found[index] = bool(np.isin(data[end], openers)) if end < data.size else last
    return found


def _first_not_space(data: np.ndarray[Any, Any], at: int) -> int:
    """The place of the first byte from ``at`` that is not a space; ``data.size`` when none is (read
    in growing windows, so a long run of spaces costs its length)."""
    width = 64
    while at < data.size:
        other = data[at : at + width] != _SPACE
        first = int(np.argmax(other))
        if other[first]:
            return at + first
        at, width = at + other.size, width * 2
    return data.size


def _last_not_quote(data: np.ndarray[Any, Any]) -> int:
    """The place of the last byte of ``data`` that is not a quote; -1 when all are. (The places of all
    the others, ``np.flatnonzero``, took 8 bytes a byte: 64 MiB more for a piece ending in a quote.)"""
    other = data[::-1] != _QUOTE
    last = int(np.argmax(other))
    return data.size - 1 - last if other[last] else -1


def _quoted_after(
    data: np.ndarray[Any, Any],
    before: int,
    quoted: bool,
    openers: np.ndarray[Any, Any],
    quotes: np.ndarray[Any, Any],
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """Where each run of quotes of ``data`` that changes anything starts, and whether a quoted field
    is open after it; ``before`` is the byte before ``data``, ``quoted`` whether a field was open,
    ``openers`` the bytes after which a quote opens a field (a comma and the line breaks), ``quotes``
    the places of the quotes in ``data``.

    Adjacent quotes pair off (a doubled quote: close and open again, or two literal quotes), so a run
    of an even number changes nothing and one of an odd number acts as its first quote. A quote after
    a comma or line break opens a field, or closes the open one; any other quote leaves the field
    unquoted (it closes the open one, or is a literal quote in an unquoted field). So after a run the
    field is open when the runs that opened or closed since the last other one are odd in number."""
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
