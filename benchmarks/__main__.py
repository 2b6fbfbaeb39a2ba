"""Run benchmark modules, print one table and record their rows in ``benchmarks/results.json``.

Speed is measured here, never in tests. Ratios are measured side by side in one run because the
machines are shared and noisy. ``python -m benchmarks predict`` runs one module: its rows replace that
module's rows in the file and every other module's rows are kept, each with the time it was measured.
"""

from __future__ import annotations

import argparse
import importlib
import json
import pkgutil
import platform
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results.json"


def discover() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules([str(HERE)]) if not m.name.startswith("_"))


def fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    return "" if value is None else str(value)


def table(rows: list[dict[str, Any]]) -> str:
    cols = ["module", "name", "value", "unit", "baseline", "ratio", "target", "passed", "notes"]
    cells = [[fmt(r.get(c)) for c in cols] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) if cells else len(c) for i, c in enumerate(cols)]
    line = " | ".join(c.ljust(w) for c, w in zip(cols, widths, strict=True))
    sep = "-+-".join("-" * w for w in widths)
    body = [" | ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)) for row in cells]
    return "\n".join([line, sep, *body])


def merge_results(
    previous: dict[str, Any] | None, ran: list[str], rows: list[dict[str, Any]], measured_at: str
) -> dict[str, Any]:
    """The results file after a run of the modules ``ran`` that produced ``rows``.

    Rows of the modules that ran are replaced (a module that now returns fewer rows loses the old
    ones) and carry ``measured_at``; rows of every other module are kept exactly as they were. Rows
    are grouped by module in name order.
    """
    # Kept as they are: a row without its time (written before rows carried one, or added by hand)
    # is not given one it may not have.
    kept = [row for row in (previous or {}).get("results", []) if row.get("module") not in ran]
    # A row that says when it was measured keeps it (benchmarks.scale hands back the rows of the
    # paths it did not run).
    fresh = [{"measured_at": measured_at, **row} for row in rows]
    merged = sorted([*kept, *fresh], key=lambda row: str(row.get("module")))  # stable: order within a module
    return {
        "measured_at": measured_at,
        "machine": {"python": platform.python_version(), "machine": platform.machine()},
        "results": merged,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("only", nargs="*", help="benchmark modules to run (default: all)")
    args = parser.parse_args()
    ran: list[str] = args.only or discover()
    rows: list[dict[str, Any]] = []
    for name in ran:
        started = time.perf_counter()
        module = importlib.import_module(f"benchmarks.{name}")
        print(f"running {name} ...", file=sys.stderr, flush=True)
        for row in module.run():
            rows.append({"module": name, **row})
        print(f"  {name} took {time.perf_counter() - started:.1f}s", file=sys.stderr, flush=True)
    print(table(rows))
    previous = json.loads(RESULTS.read_text()) if RESULTS.exists() else None
    measured_at = datetime.now(UTC).isoformat(timespec="seconds")
    RESULTS.write_text(json.dumps(merge_results(previous, ran, rows, measured_at), indent=2) + "\n")
    print(f"\nwrote {RESULTS.relative_to(HERE.parent)}")
    return 0 if all(r.get("passed") is not False for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
