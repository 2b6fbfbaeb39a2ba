"""Child process of ``benchmarks.activation_scale``: one activation task (``select_users`` or
``normalise_and_hash``) on an audience kept on disk, so the peak memory is that task's own.

``python -m benchmarks._activation_task WORKDIR ACTION`` runs the step as the activation step function
does (a worker with the function's 300 s, the engine sized as the template sizes it (``ENGINE_MEMORY_MB``), a
list split into parts of ``ACTIVATION_PART_USERS`` users and read in chunks of
``ACTIVATION_CHUNK_BYTES`` bytes, by default the pipeline's)
and prints one JSON line: seconds, CPU seconds, peak and starting resident memory (VmHWM, reset at
the start as ``benchmarks._scale_child`` does), the step's outcome or error."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks._scale_child import _peak_mb, _reset_peak_mb
from benchmarks._scale_paths import DiskBlobs, cpu_seconds
from shared.records.audiences import AudienceRecord, WorkerLease

TASK_SECONDS = 300.0


@dataclass
class DiskAudiences:
    """The activation's store as one JSON file per audience (each task is a process of its own)."""

    root: Path

    def _path(self, audience_id: str) -> Path:
        return self.root / f"{audience_id}.json"

    def get(self, org_id: str, audience_id: str) -> AudienceRecord | None:
        path = self._path(audience_id)
        return AudienceRecord.model_validate_json(path.read_text()) if path.exists() else None

    def put(self, record: AudienceRecord, apply: Callable[[AudienceRecord], None] | None = None) -> None:
        # One writer in the benchmark: nothing to meet, so no revision to check.
        self._path(record.audience_id).write_text(record.model_dump_json())

    def acquire_lease(self, org_id: str, audience_id: str, lease: WorkerLease, now: datetime) -> bool:
        record = self.get(org_id, audience_id)
        assert record is not None
        if record.lease is not None and record.lease.owner != lease.owner and record.lease.until > now:
            return False
        record.lease = lease
        self.put(record)
        return True

    def release_lease(self, org_id: str, audience_id: str, owner: str) -> None:
        record = self.get(org_id, audience_id)
        if record is not None and record.lease is not None and record.lease.owner == owner:
            record.lease = None
            self.put(record)

    def save_leased(self, record: AudienceRecord, owner: str) -> bool:
        stored = self.get(record.org_id, record.audience_id)
        if stored is not None and stored.lease is not None and stored.lease.owner != owner:
            return False
        self.put(record)
        return True


class NoPlatform:
    """SelectUsers and NormaliseAndHash never call the platform."""

    def client_for(self, org_id: str) -> Any:
        raise AssertionError("these steps do not call the platform")

    def record_usage(self, org_id: str, graph: Any) -> None:
        return None


def segment_source(blobs: DiskBlobs, setup: dict[str, str]) -> Any:
    """The segment's users as ``TargetingService.segment_columns`` gives them: from the model's
    serving shards, each loaded and scored here in turn (``TargetingService`` itself as the wiring
    builds it, over stores of one model and one dataset version),
    or, without a bundle, the ids of the customers file (``c000000001``...) with scores drawn here."""
    import numpy as np

    from shared.ml.freshness import FreshnessRules
    from shared.predictions.predict import WholeBundles
    from shared.records.audiences import SegmentProvenance
    from shared.records.datasources import DatasetVersion
    from shared.records.models import ModelRecord
    from shared.targeting.service import CoverageCache, SegmentColumns, TargetingService

    users = int(setup["segment_users"])
    now = datetime.now(UTC)
    dataset = DatasetVersion(
        org_id=setup["org_id"],
        version="v1",
        created_at=now,
        keys={"customers": setup["customers_key"]},
        row_counts={"customers": users},
        rows_read={"customers": users},
        rejected_count=0,
        rejected_rows_accepted=False,
    )
    if not setup["bundle_key"]:

        class Drawn:
            def segment_columns(self, org_id: str, spec: Any, *, values: bool = False) -> SegmentColumns:
                # "c" and nine digits, built as bytes (np.char on numbers makes 84-byte cells first).
                digits = np.empty((users, 10), dtype=np.uint8)
                digits[:, 0] = ord("c")
                numbers = np.arange(users)
                for place in range(9):
                    digits[:, 9 - place] = ord("0") + (numbers // 10**place) % 10
                ids = digits.view("S10").ravel().astype(np.str_)
                del digits, numbers
                return SegmentColumns(
                    user_ids=ids,
                    scores=np.random.default_rng(7).beta(1.2, 6.0, size=users),
                    values=None,
                    customers_key=setup["customers_key"],
                    provenance=SegmentProvenance(
                        model_name=spec.model_name,
                        model_version="m1",
                        dataset_version="v1",
                        product_id=spec.product_id,
                        rule=spec.rule,
                        value=spec.value,
                        users_selected=users,
                        users_without_customer_row=0,
                    ),
                )

        return Drawn()
    model = ModelRecord(
        org_id=setup["org_id"],
        name="shop-purchase",
        type="purchase",
        version="m1",
        trained_at=now,
        training_cutoff=now,
        training_user_count=users,
        bundle_key=setup["bundle_key"],
        bundle_sha256="scale",  # never read: the shards are
        bundle_shards=json.loads(setup["bundle_shards"]),
        bundle_shards_prefix=setup["bundle_key"].removesuffix("bundle.npz") + "shard-",
        dataset_version="v1",
    )

    class One:
        def get(self, *args: Any) -> Any:
            return model if args[1] == "shop-purchase" else dataset

        def current(self, org_id: str) -> DatasetVersion:
            return dataset

    bundles = WholeBundles(blobs)
    return TargetingService(
        models=One(),
        datasets=One(),
        bundles=bundles,
        shards=bundles,
        coverages=CoverageCache(blobs),
        blobs=blobs,
        rules=FreshnessRules(),
        clock=lambda: now,
    )


def main(argv: list[str]) -> None:
    from shared.activation.pipeline import CHUNK_BYTES, PART_USERS, ActivationPipeline
    from shared.activation.steps import Worker

    workdir, action = Path(argv[0]), argv[1]
    setup = json.loads((workdir / "audience.json").read_text())
    blobs = DiskBlobs(workdir / "blobs")
    pipeline = ActivationPipeline(
        audiences=DiskAudiences(workdir / "records"),
        blobs=blobs,
        connections=NoPlatform(),
        clock=lambda: datetime.now(UTC),
        part_users=int(os.environ.get("ACTIVATION_PART_USERS", PART_USERS)),
        # as the wiring passes ``Settings.engine_memory_mb``
        engine_memory_mb=int(os.environ["ENGINE_MEMORY_MB"]) if os.environ.get("ENGINE_MEMORY_MB") else None,
        chunk_bytes=int(os.environ.get("ACTIVATION_CHUNK_BYTES", CHUNK_BYTES)),
    )
    if setup.get("segment_users"):
        pipeline.segments = lambda: segment_source(blobs, setup)
    deadline = time.monotonic() + TASK_SECONDS
    worker = Worker(owner="bench-execution", seconds_left=lambda: deadline - time.monotonic())
    rss_before = _reset_peak_mb()
    cpu, started = cpu_seconds(), time.perf_counter()
    answer: dict[str, Any]
    try:
        result = pipeline.run(action, setup["org_id"], setup["audience_id"], worker)
        answer = {"outcome": result.outcome}
    except Exception as exc:  # what the runtime reports for an unhandled error
        answer = {"error": f"{type(exc).__name__}: {exc}"[:500]}
    answer |= {
        "seconds": time.perf_counter() - started,
        "cpu_seconds": cpu_seconds() - cpu,
        "peak_mb": _peak_mb(),
        "rss_before_mb": rss_before,
        "load_average": os.getloadavg()[0],
        "blob_calls": blobs.calls,
    }
    print(json.dumps(answer))


if __name__ == "__main__":
    main(sys.argv[1:])
