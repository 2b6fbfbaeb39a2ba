"""The row format the ML benchmarks return, and a table printer for running them directly."""

from __future__ import annotations

from typing import NotRequired, TypedDict


class BenchRow(TypedDict):
    """One measured quantity: its value, what it is compared with, and whether it meets the target."""

    name: str
    value: float
    unit: str
    baseline: float | None
    ratio: float | None
    target: str | float | None
    passed: bool | None
    notes: str
    # A peak memory row names the template function it is held to and the shop size it was measured
    # at (tests/unit/test_memory_settings.py).
    function: NotRequired[str]
    orders: NotRequired[int]


def bench_row(
    name: str,
    value: float,
    unit: str,
    *,
    baseline: float | None = None,
    target: str = "",
    passed: bool | None = None,
    notes: str = "",
) -> BenchRow:
    """A row with ``ratio = value / baseline`` filled in when there is a baseline."""
    ratio = value / baseline if baseline else None
    return BenchRow(
        name=name,
        value=value,
        unit=unit,
        baseline=baseline,
        ratio=ratio,
        target=target,
        passed=passed,
        notes=notes,
    )


def print_rows(rows: list[BenchRow]) -> None:
    """Print rows as an aligned table."""
    for row in rows:
        baseline = "" if row["baseline"] is None else f"{row['baseline']:.4g}"
        ratio = "" if row["ratio"] is None else f"{row['ratio']:.3g}x"
        verdict = {True: "PASS", False: "FAIL", None: ""}[row["passed"]]
        print(
            f"{row['name']:<38} {row['value']:>12.4g} {row['unit']:<8} base {baseline:>10} {ratio:>8} "
            f"{row['target']:<22} {verdict:<4} {row['notes']}"
        )
