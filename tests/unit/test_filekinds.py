"""What a file meant to be text is instead, from its first bytes (issue 25, item 3): the service
never opens an archive, so a compressed "bomb" is refused like any file that is not text, and the
merchant is told what the file is and what to upload instead."""

from __future__ import annotations

import bz2
import lzma
import os

import pytest

from shared.filekinds import HEAD_BYTES, not_text
from tests.hostile_files import WORKBOOK, archive, gzip_bomb

CSV = "user_id,email,first_name\nu1,zoë@example.com,Zoë\n"


@pytest.mark.parametrize(
    ("head", "what"),
    [
        (gzip_bomb(64), "a compressed file (gz)"),
        (archive(["customers.csv"]), "a compressed file (zip)"),
        (bz2.compress(CSV.encode()), "a compressed file (bz2)"),
        (lzma.compress(CSV.encode()), "a compressed file (xz)"),
        (WORKBOOK, "an Excel workbook (.xlsx)"),
        (
            bytes.fromhex("d0cf11e0a1b11ae1") + bytes(512),
            "an Excel 97-2003 workbook (.xls) or another Office document",
        ),
        (b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n", "a document (pdf, application/pdf)"),
        (bytes.fromhex("89504e470d0a1a0a") + bytes(24), "a media file (png, image/png)"),
        (CSV.encode("utf-16"), "UTF-16 text"),
        (CSV.encode("utf-16-le"), "UTF-16 text"),
        (CSV.encode("utf-16-be"), "UTF-16 text"),
        (bytes(100_000), "binary data (it holds NUL bytes)"),
        (os.urandom(HEAD_BYTES), "binary data (it holds NUL bytes)"),
    ],
    ids=[
        "gzip bomb",
        "zip",
        "bzip2",
        "xz",
        "xlsx",
        "xls",
        "pdf",
        "png",
        "utf-16 bom",
        "utf-16-le",
        "utf-16-be",
        "zeros",
        "random",
    ],
)
def test_a_file_that_is_not_text_is_named_for_what_it_is(head: bytes, what: str) -> None:
    found = not_text(head[:HEAD_BYTES])
    assert found is not None
    assert found.what == what


@pytest.mark.parametrize(
    "head",
    [
        CSV.encode(),
        ("\ufeff" + CSV).encode(),
        CSV.encode("cp1252", errors="replace"),  # not UTF-8, but text: the reader says so
        b'{"user_id": "u1", "email": "a@example.com"}\n',
        b"",
    ],
    ids=["utf-8", "utf-8 bom", "windows-1252", "json lines", "empty"],
)
def test_text_is_left_to_the_reader(head: bytes) -> None:
    assert not_text(head) is None


def test_each_kind_says_what_to_upload_instead() -> None:
    assert "Decompress it" in not_text(gzip_bomb(1)).remedy  # type: ignore[union-attr]
    assert "save it as CSV UTF-8" in not_text(WORKBOOK).remedy  # type: ignore[union-attr]
    assert "UTF-8" in not_text(CSV.encode("utf-16")).remedy  # type: ignore[union-attr]
