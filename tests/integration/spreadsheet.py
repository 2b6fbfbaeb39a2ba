"""Open a CSV in LibreOffice Calc (Debian's, headless) and read back what it computed and shows.

Calc converts the CSV to a flat OpenDocument spreadsheet (``.fods``, one XML file); each cell there
carries its type, its formula if Calc made one, and the text Calc displays. The import options are
those a person gets when they pick UTF-8 in Calc's text import dialog, with "Evaluate formulas" on:
the worst case, in which a formula-looking cell would run.
"""

from __future__ import annotations

import shutil
import subprocess
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest

SOFFICE = shutil.which("soffice") or "/usr/bin/soffice"
# CSV filter options: comma, double quote, UTF-8 (76), from line 1, standard column types, default
# language, quoted fields not forced to text, special numbers not detected, (3 export-only options),
# every sheet, evaluate formulas.
CSV_IMPORT = "CSV:44,34,76,1,,0,false,false,false,false,false,-1,true"
_NS = {
    "table": "urn:oasis:names:tc:opendocument:xmlns:table:1.0",
    "office": "urn:oasis:names:tc:opendocument:xmlns:office:1.0",
    "text": "urn:oasis:names:tc:opendocument:xmlns:text:1.0",
}


@dataclass(frozen=True)
class Cell:
    shown: str  # the text Calc displays
    kind: str  # Calc's value type: string, float, ...
    formula: str | None  # the formula Calc made of the cell, if any


def open_in_calc(data: bytes, folder: Path) -> list[list[Cell]]:
    """The first sheet of CSV ``data`` as LibreOffice Calc reads it: rows of cells, trailing empty
    cells and rows dropped."""
    if not Path(SOFFICE).exists():
        pytest.fail("LibreOffice is missing: run `make test` (it installs Debian's libreoffice-calc-nogui)")
    source = folder / "opened.csv"
    source.write_bytes(data)
    subprocess.run(
        [
            SOFFICE,
            f"-env:UserInstallation={(folder / 'profile').as_uri()}",  # its own profile: no lock shared
            "--headless",
            f"--infilter={CSV_IMPORT}",
            "--convert-to",
            "fods",
            "--outdir",
            str(folder),
            str(source),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    # The XML is Calc's own output of our test's file, not untrusted input.
    sheet = ET.parse(folder / "opened.fods").find(".//table:table", _NS)  # noqa: S314
    assert sheet is not None, "Calc wrote no sheet"
    rows: list[list[Cell]] = []
    for row in sheet.iterfind("table:table-row", _NS):
        cells: list[Cell] = []
        for cell in row.iterfind("table:table-cell", _NS):
            repeated = int(cell.get(f"{{{_NS['table']}}}number-columns-repeated", "1"))
            shown = "\n".join("".join(p.itertext()) for p in cell.iterfind("text:p", _NS))
            kind = cell.get(f"{{{_NS['office']}}}value-type", "")
            formula = cell.get(f"{{{_NS['table']}}}formula")
            cells.extend([Cell(shown, kind, formula)] * min(repeated, 64))
        while cells and not cells[-1].shown and not cells[-1].kind:
            cells.pop()
        rows.append(cells)
    while rows and not rows[-1]:
        rows.pop()
    return rows
