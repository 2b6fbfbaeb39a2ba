"""Benchmark: the activation's heavy tasks at a merchant's sizes (issue 20, item 4), each in a child
process of its own, so its peak memory is its own (``benchmarks._activation_task``).

A list activation of N users: the list is written as the upload CSV (by the engine, in seconds),
then SelectUsers (the list checked, the snapshot written and uploaded) and NormaliseAndHash (every
identifier normalised and hashed, users de-duplicated, the batches written) run as the activation
step function runs them, on a store kept on disk (``benchmarks._scale_paths.DiskBlobs``), with the
template's memory for the function (``AWS_LAMBDA_FUNCTION_MEMORY_SIZE``) and its engine limit
(``ENGINE_MEMORY_MB``, fixed in the template; half the memory where it sets none).
A list of more than ``PART_USERS`` users (2M) is split by SelectUsers into parts, and NormaliseAndHash
runs once per part, each task a process of its own, as the state machine loops over it; its rows give
the slowest and largest task, and the CPU of all of them per user (the growth law). UploadBatches
sends at most 20 batches a task whatever the list's size; its peak is measured at 1M by
``benchmarks.activation``.

A segment activation of N users (``ACTIVATION_SEGMENT_SIZES``): a dataset version's
``customers.parquet`` of N customers (written by the engine, not timed), and the segment the rule
keeps, all N of them, with a 10 % holdout: SelectUsers joins them to their customers, splits the
holdout and writes the users, groups and snapshot files from the engine; NormaliseAndHash hashes
the uploaded users (in parts past 2M). With ``ACTIVATION_SEGMENT_BUNDLE`` (a purchase bundle's
``.npz``, e.g. ``train_purchase``'s ``purchase-bundle.npz`` of ``make bench-scale``) the model is
stored as training stores it, the whole bundle and its serving shards, and SelectUsers scores the
shards one at a time (``TargetingService.segment_columns``, ``score_shards``); the customers are the
bundle's users. A bundle of fewer users than the segment is tiled to its size first
(``tiled_bundle``: its users repeated under new ids, every per-user array and key with them), so the
shards have a real model's layout and size at N users. Rows ``activation_scale.segment_bundle.<users>``.
Without it, the scores are drawn in the task: the cost of a bundle then is not in the row.

Rows: ``activation_scale.list.<users>.<task>.seconds`` (the slowest task), ``.cpu_us_per_user`` and
``.peak_mb`` (the largest task, with ``function`` and ``design_size`` for
``tests/unit/test_memory_settings.py``). Sizes: ``ACTIVATION_SCALE_SIZES``
(comma-separated users; default 1M and 3M), the design size being 30M users (``DESIGN_USERS``);
``activation_scale.segment.<users>...`` likewise, its design size 5M users (``DESIGN_SEGMENT_USERS``).
``ACTIVATION_SCALE_TASKS`` (e.g. ``select_users``) measures only those steps.
Run ``python -m benchmarks activation_scale``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb

from benchmarks._rows import BenchRow, bench_row
from local.template import load_template

FUNCTION = "ActivationStepFunction"
DESIGN_USERS = 30_000_000
DESIGN_SEGMENT_USERS = 5_000_000
SEGMENT_HOLDOUT_PERCENT = 10.0
TASK_TARGET_SECONDS = 300.0
TASK_TARGET_MB = 1024.0
TASKS = ("select_users", "normalise_and_hash")
ORG = "scale-shop"


def tasks_to_run() -> tuple[str, ...]:
    """The steps measured: ``ACTIVATION_SCALE_TASKS`` (comma-separated, in order; SelectUsers alone for
    a segment scored from a bundle, whose NormaliseAndHash is the columns run's), else both."""
    chosen = tuple(task for task in os.environ.get("ACTIVATION_SCALE_TASKS", "").split(",") if task)
    unknown = set(chosen) - set(TASKS)
    if unknown:
        raise ValueError(f"unknown tasks {sorted(unknown)}: {TASKS}")
    return chosen or TASKS


def function_memory_mb() -> int:
    properties = load_template()["Resources"][FUNCTION]["Properties"]
    return int(properties.get("MemorySize", 128))


def engine_memory_mb(memory_mb: int) -> int:
    """The engine's limit in the function: the template's ``ENGINE_MEMORY_MB``, else half its memory."""
    properties = load_template()["Resources"][FUNCTION]["Properties"]
    fixed = properties.get("Environment", {}).get("Variables", {}).get("ENGINE_MEMORY_MB")
    return int(fixed) if fixed else memory_mb // 2


def write_list(path: Path, users: int) -> None:
    """``users`` distinct customers as an upload CSV: e-mail, UK mobile, names from small pools, GB;
    one in 50 without an e-mail, one in 1,000 a repeat of an earlier user_id."""
    connection = duckdb.connect(config={"threads": os.cpu_count() or 1})
    users_table = connection.sql(
        """
        SELECT
            'u' || CASE WHEN i % 1000 = 999 THEN i - 500 ELSE i END AS user_id,
            CASE WHEN i % 50 = 7 THEN '' ELSE 'Shopper.' || i || '@Example.com' END AS email,
            (['Ana', 'Ben', 'Chloé', 'Dev', 'Eve', 'Finn'])[i % 6 + 1] AS firstName,
            (['Silva', 'Jones', 'O''Brien', 'Smith', 'Müller'])[i % 5 + 1] AS lastName,
            '+44 77' || lpad(CAST(i % 100000000 AS VARCHAR), 8, '0') AS phone,
            round((i % 997) / 997.0, 4) AS score,
            'GB' AS country
        FROM range($users) AS users(i)
        """,
        params={"users": users},
    )
    users_table.write_csv(str(path), header=True)
    connection.close()


def prepare(workdir: Path, users: int) -> dict[str, str]:
    """The audience as CreateAudience stored it: its request (the uploaded list) and its record."""
    from shared.audiences.uploads import upload_key
    from shared.records.audiences import AudienceRecord

    audience_id, upload_id = str(uuid.uuid4()), str(uuid.uuid4())
    blobs = workdir / "blobs"
    upload = blobs / upload_key(ORG, upload_id)
    upload.parent.mkdir(parents=True)
    write_list(upload, users)
    source_key = f"sources/{ORG}/{audience_id}.json"
    (blobs / source_key).parent.mkdir(parents=True)
    (blobs / source_key).write_text(json.dumps({"name": "Scale list", "uploadId": upload_id}))
    now = datetime.now(UTC)
    record = AudienceRecord(
        org_id=ORG,
        audience_id=audience_id,
        name="Scale list",
        objective="retargeting",
        status="creating",
        ad_account_id="act_1",
        snapshot_key=f"snapshots/{ORG}/{audience_id}.csv",
        source_key=source_key,
        created_at=now,
        updated_at=now,
    )
    (workdir / "records").mkdir()
    (workdir / "records" / f"{audience_id}.json").write_text(record.model_dump_json())
    setup = {"org_id": ORG, "audience_id": audience_id, "upload_bytes": str(upload.stat().st_size)}
    (workdir / "audience.json").write_text(json.dumps(setup))
    return setup


def tiled_bundle(source: Path, users: int, out: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """A purchase bundle of ``users`` users made from a trained one of fewer (``source``), written to
    ``out``: its users repeated, copy k's ids suffixed ``-k``, re-sorted by id, with every per-user
    array and every (row, user) key moved with them. Its header and arrays (for ``shard_arrays``)."""
    import json as _json

    import numpy as np

    from shared.ml.scoring import _USER_KEYED

    with np.load(source, allow_pickle=False) as npz:
        arrays = {name: npz[name] for name in npz.files}
    if "model__history_indptr" in arrays:
        raise ValueError("tiling a recommendation bundle is not supported")
    n = int(arrays["user_ids"].size)
    picked = np.arange(users)
    copy, base = np.divmod(picked, n)
    suffix = np.where(copy == 0, "", np.char.add("-", copy.astype(np.str_)))
    ids = np.char.add(arrays["user_ids"][base], suffix)
    order = np.argsort(ids, kind="stable")
    position = np.empty(users, dtype=np.int64)
    position[order] = np.arange(users)
    tiled: dict[str, Any] = {"user_ids": ids[order]}
    del ids, suffix
    for name, value in arrays.items():
        if name.startswith(("state__user_", "model__user_")):
            tiled[name] = value[base[order]]
    for keys_name, value_names in _USER_KEYED.items():
        rows, user = np.divmod(arrays[keys_name].astype(np.int64), n)
        keys: list[Any] = []
        values: dict[str, list[Any]] = {name: [] for name in value_names}
        for k in range(int(copy[-1]) + 1):
            inside = k * n + user < users
            keys.append(rows[inside] * users + position[k * n + user[inside]])
            for name in value_names:
                values[name].append(arrays[name][inside])
        every = np.concatenate(keys)
        by_key = np.argsort(every, kind="stable")
        tiled[keys_name] = every[by_key]
        for name in value_names:
            tiled[name] = np.concatenate(values[name])[by_key]
    for name, value in arrays.items():
        tiled.setdefault(name, value)
    header_bytes = tiled.pop("header")
    with out.open("wb") as file:
        np.savez(file, header=header_bytes, **tiled)
    return _json.loads(header_bytes.tobytes().decode()), tiled


def write_customers(path: Path, users: int, bundle: Path | None) -> str:
    """``users`` customers as a dataset version's ``customers.parquet`` (the sync's columns): the
    bundle's users when given (its first ``users``), else ids ``c000000001``...; e-mail, UK mobile,
    names from small pools, GB, one in 50 without an e-mail. The product the segment scores (the
    bundle's first), or "" without a bundle."""
    connection = duckdb.connect(config={"threads": os.cpu_count() or 1})
    product = ""
    if bundle is not None:
        import numpy as np

        with np.load(bundle, allow_pickle=False) as arrays:
            ids = arrays["user_ids"][:users].astype(object)
            product = str(arrays["product_ids"][0])
        connection.register("bundle_users", {"user_id": ids})
        source = "SELECT user_id, row_number() OVER () - 1 AS i FROM bundle_users"
    else:
        source = "SELECT 'c' || lpad(CAST(i AS VARCHAR), 9, '0') AS user_id, i FROM range($users) AS r(i)"
    connection.sql(
        f"""
        SELECT
            user_id,
            CASE WHEN i % 50 = 7 THEN NULL ELSE 'Shopper.' || i || '@Example.com' END AS email,
            (['Ana', 'Ben', 'Chloé', 'Dev', 'Eve', 'Finn'])[i % 6 + 1] AS first_name,
            (['Silva', 'Jones', 'O''Brien', 'Smith', 'Müller'])[i % 5 + 1] AS last_name,
            '+44 77' || lpad(CAST(i % 100000000 AS VARCHAR), 8, '0') AS phone,
            'GB' AS country, NULL::VARCHAR AS state, NULL::BOOLEAN AS limited_data_use,
            NULL::BOOLEAN AS marketing_consent, NULL::VARCHAR AS city, NULL::VARCHAR AS postcode,
            NULL::DATE AS date_of_birth, NULL::VARCHAR AS gender, NULL::VARCHAR AS external_id,
            NULL::VARCHAR AS madid
        FROM ({source}) AS users
        ORDER BY user_id
        """,  # noqa: S608 (the source is one of the two above)
        params={"users": users} if bundle is None else None,
    ).write_parquet(str(path))
    connection.close()
    return product


def prepare_segment(workdir: Path, users: int, bundle: Path | None) -> dict[str, str]:
    """A segment audience as CreateAudience stored it (top ``users`` of the product's scores, a 10 %
    holdout from a fixed seed), and the customers it is joined to."""
    from shared.records.audiences import AudienceRecord

    audience_id = str(uuid.uuid4())
    blobs = workdir / "blobs"
    customers_key = f"datasets/{ORG}/v1/customers.parquet"
    (blobs / customers_key).parent.mkdir(parents=True)
    bundle_key, shard_sums = "", []
    if bundle is not None:
        import hashlib

        import numpy as np

        from shared.ml.scoring import shard_arrays

        bundle_key = f"models/{ORG}/shop-purchase/bundle.npz"
        (blobs / bundle_key).parent.mkdir(parents=True)
        with np.load(bundle, allow_pickle=False) as npz:
            trained_users = int(npz["user_ids"].size)
        if trained_users < users:
            header, arrays = tiled_bundle(bundle, users, blobs / bundle_key)
        else:
            shutil.copyfile(bundle, blobs / bundle_key)
            with np.load(bundle, allow_pickle=False) as npz:
                arrays = {name: npz[name] for name in npz.files}
            header = json.loads(arrays.pop("header").tobytes().decode())
        bundle = blobs / bundle_key  # the customers are its users
        for shard, data in enumerate(shard_arrays(header, arrays)):
            (blobs / f"models/{ORG}/shop-purchase/shard-{shard:04d}.npz").write_bytes(data)
            shard_sums.append(hashlib.sha256(data).hexdigest())
        del arrays
    product = write_customers(blobs / customers_key, users, bundle)
    source_key = f"sources/{ORG}/{audience_id}.json"
    (blobs / source_key).parent.mkdir(parents=True)
    request = {
        "name": "Scale segment",
        "segment": {
            "modelName": "shop-purchase",
            "productId": product or "p1",
            "rule": "top_n",
            "value": users,
        },
        "holdoutPercent": SEGMENT_HOLDOUT_PERCENT,
        "holdoutSeed": "2026",
    }
    (blobs / source_key).write_text(json.dumps(request))
    now = datetime.now(UTC)
    record = AudienceRecord(
        org_id=ORG,
        audience_id=audience_id,
        name="Scale segment",
        objective="retargeting",
        status="creating",
        ad_account_id="act_1",
        snapshot_key=f"snapshots/{ORG}/{audience_id}.csv",
        source_key=source_key,
        created_at=now,
        updated_at=now,
    )
    (workdir / "records").mkdir()
    (workdir / "records" / f"{audience_id}.json").write_text(record.model_dump_json())
    setup = {
        "org_id": ORG,
        "audience_id": audience_id,
        "upload_bytes": str((blobs / customers_key).stat().st_size),
        "segment_users": str(users),
        "customers_key": customers_key,
        "bundle_key": bundle_key,
        "bundle_shards": json.dumps(shard_sums),
    }
    (workdir / "audience.json").write_text(json.dumps(setup))
    return setup


def run_task(workdir: Path, action: str, memory_mb: int) -> dict[str, Any]:
    environment = {
        **os.environ,
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(memory_mb),
        "ENGINE_MEMORY_MB": str(engine_memory_mb(memory_mb)),
        "POWERTOOLS_LOG_LEVEL": "WARNING",
        "POWERTOOLS_METRICS_DISABLED": "true",
        "TMPDIR": str(workdir / "tmp"),
    }
    (workdir / "tmp").mkdir(exist_ok=True)
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks._activation_task", str(workdir), action],
        capture_output=True,
        text=True,
        env=environment,
        check=False,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith('{"')]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"{action} exited {done.returncode}: {done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(lines[-1])
    if "error" in result:
        raise RuntimeError(f"{action} failed: {result['error']}")
    return result


def run_step(workdir: Path, action: str, memory_mb: int) -> list[dict[str, Any]]:
    """The step's tasks, as the state machine runs them: again while it answers ``more`` (a list
    hashed in parts, one part a task); each task's result."""
    tasks = [run_task(workdir, action, memory_mb)]
    print(f"  {workdir.name} {action}: {json.dumps(tasks[-1])}", file=sys.stderr, flush=True)
    while tasks[-1]["outcome"] == "more":
        tasks.append(run_task(workdir, action, memory_mb))
        print(f"  {workdir.name} {action}: {json.dumps(tasks[-1])}", file=sys.stderr, flush=True)
    return tasks


def measure(users: int, memory_mb: int, kind: str = "list", bundle: Path | None = None) -> list[BenchRow]:
    root = Path(tempfile.mkdtemp(prefix=f"activation-scale-{kind}-{users}-"))
    rows: list[BenchRow] = []
    try:
        setup = prepare(root, users) if kind == "list" else prepare_segment(root, users, bundle)
        for action in tasks_to_run():
            tasks = run_step(root, action, memory_mb)
            design = users >= (DESIGN_USERS if kind == "list" else DESIGN_SEGMENT_USERS)
            slowest = max(tasks, key=lambda task: float(task["seconds"]))
            cpu = sum(float(task["cpu_seconds"]) for task in tasks)
            loads = sorted(float(task["load_average"]) for task in tasks)
            load = f"load {loads[0]:.1f}" if len(tasks) == 1 else f"load {loads[0]:.1f}-{loads[-1]:.1f}"
            each = (
                ""
                if len(tasks) == 1
                else (
                    f" in {len(tasks)} tasks (the slowest {slowest['cpu_seconds']:.1f} s CPU; per task: "
                    + ", ".join(f"{task['seconds']:.0f}" for task in tasks)
                    + " s)"
                )
            )
            prefix = f"activation_scale.{kind}.{users}.{action}"
            megabytes = int(setup["upload_bytes"]) / 1e6
            what = (
                f"{users:,}-user list ({megabytes:,.0f} MB CSV)"
                if kind == "list"
                else f"{users:,}-user segment, {SEGMENT_HOLDOUT_PERCENT:g} % holdout "
                f"({megabytes:,.0f} MB customers.parquet; "
                + ("scored from the bundle" if bundle else "scores given as columns, no bundle")
                + ")"
            )
            rows.append(
                bench_row(
                    f"{prefix}.seconds",
                    float(slowest["seconds"]),
                    "s",
                    target=f"<= {TASK_TARGET_SECONDS:g} s a task at "
                    f"{DESIGN_USERS if kind == 'list' else DESIGN_SEGMENT_USERS:,} users",
                    passed=slowest["seconds"] <= TASK_TARGET_SECONDS if design else None,
                    notes=f"the slowest task; {what}; "
                    f"{cpu:.1f} s CPU in all{each} on {os.cpu_count()} cores; {load}; "
                    f"{sum(int(task['blob_calls']) for task in tasks)} store calls",
                )
            )
            rows.append(
                bench_row(
                    f"{prefix}.cpu_us_per_user",
                    cpu / users * 1e6,
                    "us",
                    notes=f"CPU of every task of the step ({len(tasks)}) over the list's users: flat "
                    "across sizes when the step is linear in users",
                )
            )
            peak_task = max(tasks, key=lambda task: float(task["peak_mb"]))
            peak = bench_row(
                f"{prefix}.peak_mb",
                float(peak_task["peak_mb"]),
                "MB",
                target=f"<= {TASK_TARGET_MB:g} MB a task",
                passed=peak_task["peak_mb"] <= TASK_TARGET_MB,
                notes=f"peak RSS of the largest task's process ({peak_task['rss_before_mb']:.0f} MB at its "
                f"start); engine limit {engine_memory_mb(memory_mb)} MB, the function's {memory_mb} MB",
            )
            peak["function"], peak["design_size"] = FUNCTION, design  # type: ignore[typeddict-unknown-key]
            rows.append(peak)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return rows


def run() -> list[BenchRow]:
    sizes = [int(s) for s in os.environ.get("ACTIVATION_SCALE_SIZES", "1000000,3000000").split(",") if s]
    segments = [int(s) for s in os.environ.get("ACTIVATION_SEGMENT_SIZES", "").split(",") if s]
    bundle = (
        Path(os.environ["ACTIVATION_SEGMENT_BUNDLE"]) if os.environ.get("ACTIVATION_SEGMENT_BUNDLE") else None
    )
    memory_mb = function_memory_mb()
    rows: list[BenchRow] = []
    for users in sizes:
        rows.extend(measure(users, memory_mb))
    segment_kind = "segment_bundle" if bundle else "segment"
    for users in segments:
        rows.extend(measure(users, memory_mb, segment_kind, bundle))
    ran = {f"list.{users}" for users in sizes} | {f"{segment_kind}.{users}" for users in segments}
    return [*kept_rows(ran), *rows]


def kept_rows(ran: set[str]) -> list[BenchRow]:
    """The recorded rows of the sizes not run this time (``list.<users>``), as they were, with their
    own time: a run at 30M users does not drop the 1M and 10M points."""
    results = Path(__file__).resolve().parent / "results.json"
    if not results.exists():
        return []
    recorded = json.loads(results.read_text()).get("results", [])
    return [
        {key: value for key, value in row.items() if key != "module"}  # type: ignore[misc]
        for row in recorded
        if row.get("module") == "activation_scale" and ".".join(str(row["name"]).split(".")[1:3]) not in ran
    ]


if __name__ == "__main__":
    for row in run():
        print(json.dumps(row))
