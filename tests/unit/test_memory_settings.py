"""Memory settings follow measurements (issue 20, item 6): every peak a benchmark recorded for a function
fits the memory the template gives that function, with a third to spare at the design size."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from local.template import ROOT, load_template, resources_of_type

TEMPLATE = load_template()
RESULTS = ROOT / "benchmarks" / "results.json"
DESIGN_ORDERS = 10_000_000
# Room above the measured peak at the design size: Lambda kills a function at its MemorySize.
HEADROOM = 1.3


def memory_sizes(template: dict[str, Any]) -> dict[str, int]:
    """Each function's MemorySize, Globals' where it sets none."""
    default = int(template.get("Globals", {}).get("Function", {}).get("MemorySize", 128))
    return {
        logical_id: int(resource["Properties"].get("MemorySize", default))
        for logical_id, resource in resources_of_type(template, "AWS::Serverless::Function").items()
    }


def recorded_peaks(path: Path) -> list[dict[str, Any]]:
    """The benchmark rows that hold a function's peak memory (``function`` and unit MB)."""
    rows = json.loads(path.read_text())["results"] if path.exists() else []
    return [row for row in rows if row.get("function") and row.get("unit") == "MB"]


def required_mb(row: dict[str, Any]) -> float:
    """What a recorded peak asks of its function: 1.3x at the design size, the peak itself below it.
    A row says its size in orders, or (a path measured in other units, such as an activation's
    users) whether it is at the design size."""
    at_design = bool(row.get("design_size")) or int(row.get("orders", 0)) >= DESIGN_ORDERS
    return float(row["value"]) * (HEADROOM if at_design else 1.0)


PEAKS = recorded_peaks(RESULTS)


@pytest.mark.parametrize("row", PEAKS, ids=[str(row["name"]) for row in PEAKS])
def test_each_recorded_peak_fits_its_functions_memory(row: dict[str, Any]) -> None:
    sizes = memory_sizes(TEMPLATE)
    assert row["function"] in sizes, f"{row['name']} names no function of the template"
    assert sizes[row["function"]] >= required_mb(row), (
        f"{row['function']} has {sizes[row['function']]} MB; {row['name']} measured {row['value']:.0f} MB"
    )


def test_a_peak_above_the_functions_memory_fails() -> None:
    # Given a function with 1,024 MB and a design-size peak of 900 MB (1.3x is 1,170 MB)
    template = {"Resources": {"F": {"Type": "AWS::Serverless::Function", "Properties": {"MemorySize": 1024}}}}
    row = {"name": "sync.10000000.peak_mb", "value": 900.0, "unit": "MB", "function": "F", "orders": 10**7}

    # Then the rule the test above applies refuses it, and accepts it below the design size
    assert memory_sizes(template)["F"] < required_mb(row)
    assert memory_sizes(template)["F"] >= required_mb({**row, "orders": 1_000_000})
    # and a row measured in users says whether it is at the design size
    assert required_mb({**row, "orders": 0, "design_size": True}) == 900.0 * 1.3
