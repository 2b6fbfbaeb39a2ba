"""Child process of ``benchmarks.purchase_events``: the purchases step of one dataset version, run as
the state machine runs it (invocations of the function's 900 s until done), against the platform
sandbox over HTTP, so the peak memory is the step's own.

``python -m benchmarks._purchase_task WORKDIR SANDBOX_URL TOKEN`` prints one JSON line: seconds, CPU
seconds, invocations, the record's counts, peak and starting resident memory (VmHWM reset at the start).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks._scale_child import _peak_mb, _reset_peak_mb
from benchmarks._scale_paths import cpu_seconds
from shared.dataplane.engine import session
from shared.events.purchases import PurchaseEvents
from shared.platform.client import GraphClient
from shared.records.connections import Connection
from shared.records.datasources import DatasetVersion
from shared.records.events import PurchaseSend

FUNCTION_SECONDS = 900.0
AD_ACCOUNT = "act_100000000000001"


@dataclass
class MemoryEvents:
    records: dict[str, PurchaseSend] = field(default_factory=dict)
    pointer: tuple[str | None, str | None] = (None, None)

    def get_purchases(self, org_id: str, version: str) -> PurchaseSend | None:
        return self.records.get(version)

    def put_purchases(self, record: PurchaseSend) -> None:
        self.records[record.dataset_version] = record.model_copy(deep=True)

    def put_purchases_counted(
        self, record: PurchaseSend, day: str, counts: dict[tuple[str, str, str], int]
    ) -> None:
        self.put_purchases(record)  # the benchmark keeps no day counts (``counted`` is off)

    def finish_purchases(self, record: PurchaseSend) -> None:
        self.put_purchases(record)
        self.pointer = (record.dataset_version, None)

    def mark_part_sent(self, org_id: str, version: str) -> None:
        self.pointer = (self.pointer[0], version)

    def pointers(self, org_id: str) -> tuple[str | None, str | None]:
        return self.pointer


@dataclass
class World:
    """The dataset store, the data bucket (a directory) and the connection, for one organization."""

    root: Path
    graph: GraphClient

    def get(self, org_id: str, version: str) -> DatasetVersion | None:
        return DatasetVersion.model_validate_json((self.root / "version.json").read_text())

    def download(self, key: str, path: Path) -> None:
        shutil.copyfile(self.root / key, path)

    def client_for(self, org_id: str) -> tuple[Connection, GraphClient]:
        return Connection(
            org_id=org_id, status="active", ad_account_id=AD_ACCOUNT, currency="GBP"
        ), self.graph

    def record_usage(self, org_id: str, graph: GraphClient) -> None:
        return None


def seconds_left(budget: float) -> Callable[[], float]:
    """What one invocation of ``budget`` seconds has left, as the Lambda context says it."""
    deadline = time.monotonic() + budget
    return lambda: deadline - time.monotonic()


def main(argv: list[str]) -> None:
    workdir, url, token = Path(argv[0]), argv[1], argv[2]
    version = DatasetVersion.model_validate_json((workdir / "version.json").read_text())
    with GraphClient(
        base_url=url,
        version="v25.0",
        app_id="1000000000000001",
        app_secret="sandbox-app-secret",
        access_token=token,
    ) as graph:
        world = World(workdir, graph)
        events = MemoryEvents()
        step = PurchaseEvents(
            events=events,
            datasets=world,
            blobs=world,
            connections=world,
            session=session,
            clock=lambda: datetime.now(UTC),
        )
        rss_before = _reset_peak_mb()
        cpu, started = cpu_seconds(), time.perf_counter()
        invocations = 0
        answer: dict[str, Any] = {}
        try:
            while True:
                invocations += 1
                progress = step.step(version.org_id, version.version, seconds_left(FUNCTION_SECONDS))
                if progress.status != "sending":
                    answer["status"] = progress.status
                    break
        except Exception as exc:  # what the runtime reports for an unhandled error
            answer = {"error": f"{type(exc).__name__}: {exc}"[:500]}
        record = events.records.get(version.version)
        answer |= {
            "seconds": time.perf_counter() - started,
            "cpu_seconds": cpu_seconds() - cpu,
            "invocations": invocations,
            "peak_mb": _peak_mb(),
            "rss_before_mb": rss_before,
            "load_average": os.getloadavg()[0],
            "record": record.model_dump(mode="json", exclude={"rejections"}) if record else None,
        }
    print(json.dumps(answer))


if __name__ == "__main__":
    main(sys.argv[1:])
