"""Benchmark: a first sync's purchases sent to the pixel (issue 21, item 2), at 1M orders.

A dataset version of N orders placed over the last six days (all inside the platform's window; one
line each, two for one in three; N/5 customers with e-mail, phone, names and country) is written as
the sync writes it
(``orders.parquet``, ``customers.parquet``). The purchases step then runs in a child process of its
own (``benchmarks._purchase_task``: invocations of the function's 900 s until done, the engine sized by
the template's memory for ``SendPurchaseEventsFunction``), sending to the platform sandbox over HTTP
in this process, as the platform would be remote.

Rows ``purchase_events.first_sync.<orders>.*``: events sent per second by the one function, seconds,
platform calls (the events calls: batches of the documented maximum, 1,000), the step's peak memory
(with ``function`` and ``orders`` for ``tests/unit/test_memory_settings.py``). The sandbox's own
count of what the pixel kept is checked against the orders. Sizes: ``PURCHASE_EVENTS_ORDERS``
(comma-separated; default 1M). Run ``python -m benchmarks purchase_events``.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb

from benchmarks._rows import BenchRow, bench_row
from local.template import load_template
from platform_sandbox import SandboxConfig, SandboxServer
from platform_sandbox.scenarios import PIXEL_ID

FUNCTION = "SendPurchaseEventsFunction"
ORG = "bench-shop"
VERSION = "20261125T000000Z-bench001"
EVENTS_PER_CALL = 1000


def function_memory_mb() -> int:
    properties = load_template()["Resources"][FUNCTION]["Properties"]
    return int(properties.get("MemorySize", 128))


def write_version(root: Path, orders: int) -> None:
    """The version's two Parquet files and its record, written by the engine in seconds."""
    customers = max(1, orders // 5)
    now = datetime.now(UTC).replace(tzinfo=None, microsecond=0)
    connection = duckdb.connect(config={"threads": os.cpu_count() or 1})
    (root / VERSION).mkdir(parents=True)
    connection.sql(
        """
        SELECT
            'u' || i AS user_id,
            'Shopper.' || i || '@Example.com' AS email,
            (['Ana', 'Ben', 'Chloé', 'Dev', 'Eve', 'Finn'])[i % 6 + 1] AS first_name,
            (['Silva', 'Jones', 'O''Brien', 'Smith', 'Müller'])[i % 5 + 1] AS last_name,
            '+44 77' || lpad(CAST(i % 100000000 AS VARCHAR), 8, '0') AS phone,
            'GB' AS country,
            CAST(NULL AS VARCHAR) AS state,
            CAST(NULL AS BOOLEAN) AS limited_data_use
        FROM range($customers) AS c(i)
        ORDER BY user_id
        """,
        params={"customers": customers},
    ).write_parquet(str(root / VERSION / "customers.parquet"), compression="zstd")
    connection.sql(
        """
        SELECT
            'o' || o.i AS order_id,
            'u' || (o.i % $customers) AS user_id,
            'p' || ((o.i * 7 + l.k) % 500) AS product_id,
            1 + (o.i + l.k) % 3 AS quantity,
            round(5 + ((o.i * 13 + l.k) % 9000) / 100.0, 2) AS amount,
            CAST($now AS TIMESTAMP)
                - INTERVAL 1 SECOND * (($orders - o.i) * (6 * 86400 - 3600) // $orders) AS "timestamp"
        FROM range($orders) AS o(i)
        JOIN range(2) AS l(k) ON l.k = 0 OR o.i % 3 = 0
        ORDER BY "timestamp"
        """,
        params={"customers": customers, "orders": orders, "now": now},
    ).write_parquet(str(root / VERSION / "orders.parquet"), compression="zstd")
    counted = connection.execute(
        "SELECT count(*) FROM read_parquet($path)", {"path": str(root / VERSION / "orders.parquet")}
    ).fetchone()
    lines = int(counted[0]) if counted else 0
    connection.close()
    record = {
        "org_id": ORG,
        "version": VERSION,
        "created_at": datetime.now(UTC).isoformat(),
        "keys": {"orders": f"{VERSION}/orders.parquet", "customers": f"{VERSION}/customers.parquet"},
        "row_counts": {"orders": lines, "customers": customers},
        "rows_read": {},
        "rejected_count": 0,
        "rejected_rows_accepted": False,
    }
    (root / "version.json").write_text(json.dumps(record))


def run_step(root: Path, url: str, token: str, memory_mb: int) -> dict[str, Any]:
    environment = {
        **os.environ,
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(memory_mb),
        "POWERTOOLS_LOG_LEVEL": "WARNING",
        "POWERTOOLS_METRICS_DISABLED": "true",
        "TMPDIR": str(root / "tmp"),
    }
    (root / "tmp").mkdir(exist_ok=True)
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks._purchase_task", str(root), url, token],
        capture_output=True,
        text=True,
        env=environment,
        check=False,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith('{"')]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"the purchases step exited {done.returncode}: {done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(lines[-1])
    if "error" in result:
        raise RuntimeError(f"the purchases step failed: {result['error']}")
    return result


def measure(orders: int, memory_mb: int) -> list[BenchRow]:
    root = Path(tempfile.mkdtemp(prefix=f"purchase-events-{orders}-"))
    try:
        write_version(root, orders)
        # The sandbox keeps few events in full: the pixel's counts are what is checked.
        with SandboxServer(SandboxConfig(events_kept_per_pixel=100, request_log_size=10)) as sandbox:
            from platform_sandbox import tokens

            with sandbox.state.lock:
                world = sandbox.state.world
                token = tokens.mint_user_token(world, world.dialog_user_id, ["ads_management"], 0, 0).value
            result = run_step(root, sandbox.url, token, memory_mb)
            with sandbox.state.lock:
                activity = sandbox.state.world.pixel_activity[PIXEL_ID]
                kept, received = activity.counted["Purchase"], activity.received
    finally:
        shutil.rmtree(root, ignore_errors=True)
    record = result["record"]
    sent, calls, seconds = int(record["sent"]), int(record["calls"]), float(result["seconds"])
    expected_calls = math.ceil(orders / EVENTS_PER_CALL)
    load = f"load {result['load_average']:.1f} on {os.cpu_count()} cores"
    prefix = f"purchase_events.first_sync.{orders}"
    checked = f"the pixel kept {kept:,} purchases of {received:,} received"
    rows = [
        bench_row(
            f"{prefix}.events_per_second",
            sent / seconds,
            "events/s",
            target="",
            notes=f"{sent:,} purchases from {orders:,} orders sent by one function in {seconds:.1f} s "
            f"({result['cpu_seconds']:.1f} s CPU, {result['invocations']} invocation(s) of 900 s); "
            f"{checked}; sandbox in the parent process over HTTP; {load}",
        ),
        bench_row(
            f"{prefix}.platform_calls",
            float(calls),
            "calls",
            target=f"== {expected_calls:,} (batches of {EVENTS_PER_CALL:,})",
            passed=calls == expected_calls and sent == orders == kept,
            notes=f"events calls; plus one pixel list per invocation; {record['rejected']} rejected, "
            f"{record['skipped_too_old'] + record['outside_window']} skipped",
        ),
    ]
    peak = bench_row(
        f"{prefix}.peak_mb",
        float(result["peak_mb"]),
        "MB",
        target=f"<= {memory_mb} MB (the function's memory)",
        passed=result["peak_mb"] <= memory_mb,
        notes=f"peak RSS of the step's process ({result['rss_before_mb']:.0f} MB at its start); "
        f"engine limit {memory_mb // 2} MB",
    )
    peak["function"], peak["orders"] = FUNCTION, orders
    rows.append(peak)
    return rows


def run() -> list[BenchRow]:
    sizes = [int(s) for s in os.environ.get("PURCHASE_EVENTS_ORDERS", "1000000").split(",") if s]
    memory_mb = function_memory_mb()
    rows: list[BenchRow] = []
    for orders in sizes:
        rows.extend(measure(orders, memory_mb))
    return rows


if __name__ == "__main__":
    for row in run():
        print(json.dumps(row))
