"""Files a merchant may upload that are not what the service reads: built here, the same for the unit
tests and the ones through the local stack."""

from __future__ import annotations

import gzip
import io
import zipfile


def archive(entries: list[str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as file:
        for name in entries:
            file.writestr(name, "<x/>" * 50)
    return buffer.getvalue()


def gzip_bomb(mebibytes: int) -> bytes:
    """``mebibytes`` of zeros, gzipped: about a thousandth of that on the wire."""
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", compresslevel=9) as file:
        for _ in range(mebibytes):
            file.write(bytes(1 << 20))
    return buffer.getvalue()


WORKBOOK = archive(["[Content_Types].xml", "_rels/.rels", "xl/workbook.xml", "xl/worksheets/sheet1.xml"])
