"""Real shop sizes (issue 20): each path of the data plane at 100k, 1M and 10M order lines, as size ->
seconds, peak MB and calls, with the growth law between the points.

The shops are written by ``tools.large_shop`` (customers = orders / 10, 20k products) into
``SCALE_DIR`` (default ``scale-shops`` in the temporary directory) and kept there for the next run. Each path
(``benchmarks._scale_paths.PATHS``) runs at each size in a child process of its own, so its peak
resident memory (its high-water mark, reset at its start) is measured, not guessed; paths run in
order at each size and a later path reads what an earlier one stored (the sync's dataset version).

Rows: ``<path>.<orders>.seconds`` and ``<path>.<orders>.peak_mb`` (with ``function``, the template
function whose ``MemorySize`` the peak is held to by ``tests/unit/test_memory_settings.py``, and
``orders``), ``<path>.<orders>.calls``, and ``<path>.growth`` (the exponent of seconds against order
lines between the first and the last point: 1.0 is linear).

``SCALE_MAX_ORDERS`` (e.g. ``1000000``) leaves out the larger points on a machine without the time,
``SCALE_MIN_ORDERS`` the smaller ones (a path that reads a larger point's work only);
``SCALE_PATHS`` (comma-separated) runs only those paths; the other paths' recorded rows are kept as
they were. ``make bench-scale`` runs this module.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks._rows import BenchRow, bench_row
from benchmarks._scale_paths import PATHS, ShopSize

SIZES = [
    ShopSize(customers=10_000, orders=100_000, products=20_000),
    ShopSize(customers=100_000, orders=1_000_000, products=20_000),
    ShopSize(customers=1_000_000, orders=10_000_000, products=20_000),
]
DESIGN_ORDERS = 10_000_000
# Issue 20's targets at the design size, by path: (seconds, peak MB).
TARGETS: dict[str, tuple[float | None, float | None]] = {
    "sync": (90.0, 1536.0),
    "lift": (1.0, 300.0),
    "train_purchase": (600.0, 3072.0),
    "train_recommendation": (600.0, 3072.0),
    "preview": (1.5, None),
}


def run() -> list[BenchRow]:
    root = Path(os.environ.get("SCALE_DIR", Path(tempfile.gettempdir()) / "scale-shops"))
    max_orders = int(os.environ.get("SCALE_MAX_ORDERS", str(DESIGN_ORDERS)))
    min_orders = int(os.environ.get("SCALE_MIN_ORDERS", "0"))
    only = {name for name in os.environ.get("SCALE_PATHS", "").split(",") if name}
    paths = [p for p in PATHS if not only or p.name in only]
    measured: dict[str, list[tuple[ShopSize, dict[str, Any]]]] = {p.name: [] for p in paths}
    for size in (s for s in SIZES if min_orders <= s.orders <= max_orders):
        shop_dir = _shop(root, size)
        workdir = root / f"work-{size.orders}"
        if any(p.name == "sync" for p in paths):  # a fresh version; else the last sync's is read
            shutil.rmtree(workdir, ignore_errors=True)
        workdir.mkdir(parents=True, exist_ok=True)
        for path in paths:
            if size.orders > path.max_orders:
                continue
            print(f"  scale: {path.name} at {size.label} ...", file=sys.stderr, flush=True)
            result = _child(path.name, shop_dir, workdir, size)
            measured[path.name].append((size, result))
    rows: list[BenchRow] = _kept_rows({p.name for p in paths}) if only else []
    for path in paths:
        points = measured[path.name]
        for size, result in points:
            rows.extend(_rows(path.name, path.function, size, result))
        if len(points) >= 2:
            rows.append(_growth(path.name, points))
    print(_table(paths, measured), file=sys.stderr)
    return rows


def _kept_rows(ran: set[str]) -> list[BenchRow]:
    """The recorded rows of the paths not run this time, as they were (with their own time): a run of
    some paths replaces only theirs."""
    results = Path(__file__).resolve().parent / "results.json"
    if not results.exists():
        return []
    rows = json.loads(results.read_text()).get("results", [])
    return [
        {key: value for key, value in row.items() if key != "module"}  # type: ignore[misc]
        for row in rows
        if row.get("module") == "scale" and str(row.get("name", "")).split(".")[0] not in ran
    ]


def _shop(root: Path, size: ShopSize) -> Path:
    """The shop's files, written once per size (a stamp says they are complete)."""
    directory = root / f"shop-{size.customers}-{size.orders}-{size.products}"
    stamp = directory / ".complete"
    if not stamp.exists():
        started = time.perf_counter()
        # In a child of its own, so this process stays small for the children it starts.
        command = [
            sys.executable,
            "-m",
            "tools.large_shop",
            str(directory),
            "--customers",
            str(size.customers),
        ]
        command += ["--orders", str(size.orders), "--products", str(size.products)]
        subprocess.run(command, check=True, capture_output=True)
        stamp.write_text("ok")
        print(f"  scale: wrote {size.label} in {time.perf_counter() - started:.1f}s", file=sys.stderr)
    return directory


def _child(name: str, shop_dir: Path, workdir: Path, size: ShopSize) -> dict[str, Any]:
    command = [sys.executable, "-m", "benchmarks._scale_child", name, str(shop_dir), str(workdir)]
    command += [str(size.customers), str(size.orders), str(size.products)]
    child = subprocess.run(command, capture_output=True, text=True)
    if child.returncode != 0:
        raise RuntimeError(f"scale path {name} at {size.label} failed:\n{child.stderr[-4000:]}")
    result: dict[str, Any] = json.loads(child.stdout.strip().splitlines()[-1])
    return result


def _rows(name: str, function: str, size: ShopSize, result: dict[str, Any]) -> list[BenchRow]:
    seconds_target, peak_target = TARGETS.get(name, (None, None))
    design = size.orders == DESIGN_ORDERS
    prefix = f"{name}.{size.orders}"
    load = f"load {result['load_average']:.1f}"
    seconds = bench_row(
        f"{prefix}.seconds",
        float(result["seconds"]),
        "s",
        target=f"<= {seconds_target:g} s at 10M orders" if seconds_target else "",
        passed=(result["seconds"] <= seconds_target) if design and seconds_target else None,
        notes=f"{size.label}; {result['cpu_seconds']:.1f} s CPU in the child; {load}; {result['notes']}",
    )
    peak = bench_row(
        f"{prefix}.peak_mb",
        float(result["peak_mb"]),
        "MB",
        target=f"<= {peak_target:g} MB at 10M orders" if peak_target else "",
        passed=(result["peak_mb"] <= peak_target) if design and peak_target else None,
        notes=f"{size.label}; peak RSS of the child ({result['rss_before_mb']:.0f} MB after imports)",
    )
    calls = bench_row(f"{prefix}.calls", float(result["calls"]), "calls", notes=size.label)
    # The memory test holds each function to its measured peaks: say which function and at what size.
    peak["function"], peak["orders"] = function, size.orders
    return [seconds, peak, calls]


def _growth(name: str, points: list[tuple[ShopSize, dict[str, Any]]]) -> BenchRow:
    (first, a), (last, b) = points[0], points[-1]
    exponent = math.log(max(b["seconds"], 1e-6) / max(a["seconds"], 1e-6)) / math.log(
        last.orders / first.orders
    )
    memory = math.log(max(b["peak_mb"], 1.0) / max(a["peak_mb"], 1.0)) / math.log(last.orders / first.orders)
    return bench_row(
        f"{name}.growth",
        exponent,
        "exponent",
        notes=f"seconds ~ orders^{exponent:.2f}, peak MB ~ orders^{memory:.2f} "
        f"from {first.label} to {last.label}",
    )


def _table(paths: list[Any], measured: dict[str, list[tuple[ShopSize, dict[str, Any]]]]) -> str:
    lines = [f"{'path':<22} {'size':<16} {'seconds':>9} {'peak MB':>9} {'calls':>7}"]
    for path in paths:
        for size, result in measured[path.name]:
            lines.append(
                f"{path.name:<22} {size.label:<16} {result['seconds']:>9.2f} {result['peak_mb']:>9.0f} "
                f"{result['calls']:>7}"
            )
    return "\n".join(lines)
