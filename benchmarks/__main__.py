"""Run every benchmark module, print one table and write ``benchmarks/results.json``.

Speed is measured here, never in tests. Ratios are measured side by side in one run because the
machines are shared and noisy.
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("only", nargs="*", help="benchmark modules to run (default: all)")
    args = parser.parse_args()
    rows: list[dict[str, Any]] = []
    for name in args.only or discover():
        started = time.perf_counter()
        module = importlib.import_module(f"benchmarks.{name}")
        print(f"running {name} ...", file=sys.stderr, flush=True)
        for row in module.run():
            rows.append({"module": name, **row})
        print(f"  {name} took {time.perf_counter() - started:.1f}s", file=sys.stderr, flush=True)
    print(table(rows))
    RESULTS.write_text(
        json.dumps(
            {
                "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
                "machine": {"python": platform.python_version(), "machine": platform.machine()},
                "results": rows,
            },
            indent=2,
        )
        + "\n"
    )
    print(f"\nwrote {RESULTS.relative_to(HERE.parent)}")
    return 0 if all(r.get("passed") is not False for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
