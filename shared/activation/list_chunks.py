"""A large uploaded list read in chunks of whole records, one chunk a SelectUsers task (issue 20).

A task reads the bytes of its chunk from the object by range, from where the previous chunk ended
(always the start of a record), and carries on past its nominal end to the end of the record there:
the first line break outside a quoted field. Whether a line break is inside a quoted field is told by
the number of quote characters before it since the chunk's start (even: outside), which is exact for
CSV whose quotes open fields (RFC 4180: a quote starts a field, or doubles a quote inside one). A
quote anywhere else (``ab"c``) is a literal character to Python's csv module and would make the
count lie, so a chunk that holds one is not cut: it runs to the end of the file (one task reads the
rest, as before). Each chunk is read ``PIECE_BYTES`` at a time, so a task never holds more than that
of the file in memory.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import BinaryIO

import numpy as np

# Bytes read from the object per ranged GET (and held at once).
PIECE_BYTES = 8 << 20
_QUOTE, _NEWLINE = ord('"'), ord("\n")
# What may come just before a quote that opens a field: a comma, a line break, or the quote before it
# (a doubled quote inside a quoted field counts as a close and an open).
_OPENER_BEFORE = np.array([ord(","), ord("\n"), ord("\r"), _QUOTE], dtype=np.uint8)

# Reads bytes ``start`` to ``end`` inclusive of the object (a ranged GET).
RangeReader = Callable[[int, int], bytes]


@dataclass(frozen=True)
class CopiedRecords:
    """Where the copied records end (the next chunk's start; the object's size at its end) and how
    many line breaks they hold (the line numbers of later chunks count on from them)."""

    end: int
    lines: int


def copy_records(
    read: RangeReader, start: int, target: int, size: int, file: BinaryIO, piece_bytes: int = PIECE_BYTES
) -> CopiedRecords:
    """Copy the object's bytes from ``start`` (the start of a record) into ``file``, up to the end of
    the record holding byte ``target - 1``, or to its end (``size`` bytes) when no line break outside
    a quoted field follows, or when a quote does not open a field (the count could not be trusted)."""
    parity, before, plain, lines, position = 0, _NEWLINE, True, 0, start
    while position < size:
        piece = read(position, min(size, position + piece_bytes) - 1)
        data = np.frombuffer(piece, dtype=np.uint8)
        quotes = np.flatnonzero(data == _QUOTE)
        breaks = np.flatnonzero(data == _NEWLINE)
        # Line breaks after the first quote that opens no field cannot be told inside or out.
        trusted = data.size
        if plain and quotes.size:
            previous = np.where(quotes > 0, data[np.maximum(quotes - 1, 0)], before)
            opening = (parity + np.arange(quotes.size)) % 2 == 0
            stray = np.flatnonzero(opening & ~np.isin(previous, _OPENER_BEFORE))
            if stray.size:
                trusted = int(quotes[stray[0]])
        if plain and position + data.size >= target:
            after = breaks[(breaks >= target - 1 - position) & (breaks < trusted)]
            outside = after[(parity + np.searchsorted(quotes, after)) % 2 == 0]
            if outside.size:
                cut = int(outside[0]) + 1
                file.write(piece[:cut])
                return CopiedRecords(end=position + cut, lines=lines + int(np.searchsorted(breaks, cut)))
        plain = plain and trusted == data.size
        file.write(piece)
        lines += int(breaks.size)
        parity = (parity + int(quotes.size)) % 2
        before = int(data[-1])
        position += data.size
    return CopiedRecords(end=size, lines=lines)
