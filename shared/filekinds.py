"""What a file that should be text is instead, from its first bytes: a compressed archive, a
spreadsheet workbook, a document, an image, UTF-16 text or other binary data (issue 25, item 3).

A merchant uploads what their shop or spreadsheet program gave them. A gzip file of a gigabyte of
zeros is a megabyte on the wire: the service never decompresses an upload, so such a "bomb" is
refused here, from its first bytes, like any file that is not text; only what the merchant should
do differs (decompress it, or save the workbook as CSV). The signatures are the ``filetype``
library's (magic numbers of archives, documents, images, media), plus the two it does not know that
merchants send: the OLE2 container of Excel 97-2003 workbooks and text saved as UTF-16.

Imports nothing of ``shared``: the audience uploads and the data source's reader both ask it.
"""

from __future__ import annotations

from dataclasses import dataclass

import filetype

# How much of a file is looked at: filetype's own signature window.
HEAD_BYTES = 8192

_OLE2 = bytes.fromhex("d0cf11e0a1b11ae1")
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
_SPREADSHEETS = {"xlsx", "ods"}
_DOCUMENTS = {"docx", "doc", "pptx", "ppt", "odt", "odp", "rtf", "pdf", "epub"}


@dataclass(frozen=True)
class NotText:
    """A file that is not text: ``what`` it is, in a merchant's words ("a gzip-compressed file"),
    and ``remedy``, what to upload instead."""

    what: str
    remedy: str


def not_text(head: bytes, *, expected: str = "CSV") -> NotText | None:
    """What ``head`` (a file's first bytes, ``HEAD_BYTES`` are enough) shows the file to be when it
    is not text, or None when it may be text (the reader then checks it). ``expected`` is the format
    the caller reads, named in the remedies: "CSV", "CSV or JSON Lines"."""
    save_as = "Open it in your spreadsheet program and save it as CSV UTF-8, then upload that file."
    if head.startswith(_UTF16_BOMS) or _mostly_alternate_nuls(head):
        return NotText(
            "UTF-16 text", "Save it again in UTF-8 (in Excel: Save As, CSV UTF-8), then upload it."
        )
    if head.startswith(_OLE2):
        return NotText("an Excel 97-2003 workbook (.xls) or another Office document", save_as)
    kind = filetype.guess(head[:HEAD_BYTES])
    if kind is not None:
        extension = kind.extension
        if extension in _SPREADSHEETS:
            name = (
                "an Excel workbook (.xlsx)" if extension == "xlsx" else "an OpenDocument spreadsheet (.ods)"
            )
            return NotText(name, save_as)
        if extension not in _DOCUMENTS and kind in filetype.archive_matchers:
            return NotText(
                f"a compressed file ({extension})",
                f"Decompress it and upload the {expected} file inside; the service does not open archives.",
            )
        what = (
            "a document" if extension in _DOCUMENTS or kind in filetype.document_matchers else "a media file"
        )
        return NotText(
            f"{what} ({extension}, {kind.mime})", f"Export the data as {expected}, then upload it."
        )
    if b"\x00" in head:
        return NotText("binary data (it holds NUL bytes)", f"Export the data as {expected}, then upload it.")
    return None


def _mostly_alternate_nuls(head: bytes) -> bool:
    """UTF-16 without a byte-order mark: Latin text has a NUL in every other byte."""
    sample = head[:HEAD_BYTES]
    if len(sample) < 8:
        return False
    even, odd = sample[0::2].count(0) / len(sample[0::2]), sample[1::2].count(0) / len(sample[1::2])
    return (even > 0.9 and odd < 0.1) or (odd > 0.9 and even < 0.1)
