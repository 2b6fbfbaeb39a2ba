"""Benchmark: normalising and hashing audience identifiers, fast path against a straightforward version.

Both run in one process, one after the other, on the same synthetic corpus, so the ratio is fair on a
shared machine. The target is 300k users/s per core (one process, one thread) for e-mail, phone, first
and last name and country. Run ``python -m benchmarks audience_hashing``.

The straightforward version and the corpus are the unit tests' oracle and data
(``tests/audience_reference.py``): the benchmark times the very code the tests trust. The corpus's names
follow a rank-frequency law fitted to census surname counts (see there), so the fast path's memo of
repeated names gets the hit rate a real list would give it, no more.

Two bounds put the fast path's number in context, measured in the same run: the SHA-256 digests alone
(two per user), and the least a Python pass over the same users can do: the columns read from the
records, e-mails trimmed and lower-cased, phones reduced to digits, each hashed, names and countries
hashed once per distinct value, rows zipped; no validation, no phone rules, no duplicates, no report.
Where the fast path's time goes is profiled per step in the notes.

The bulk path (issue 20, item 5: ``shared.activation.hashing``, the engine) is timed beside them on the
same users, as NormaliseAndHash meets them: a users CSV on disk, read by the engine, normalised and
hashed, de-duplicated, counted and written out as the upload's JSON batches. Its target is 5x the plain
Python pass (``prepare_reference`` from the records, no CSV to read) in wall time, in the same run; the
engine uses the machine's cores, the Python passes one.

The bulk path is also timed against the code before phones were read with libphonenumber's plans
(commit ``BULK_BEFORE_COMMIT``, hand-written dialing rules for ten countries decided per number shape),
each in a fresh child process on the same users CSV, alternating: the ratio is what reading every
country's numbers costs. Since 3772d0e the engine reads most numbers itself, as libphonenumber's
``parse`` does over the library's own plans; the Python normaliser reads the rest.
"""

from __future__ import annotations

import cProfile
import csv
import gc
import hashlib
import io
import json
import os
import pstats
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from itertools import repeat
from pathlib import Path

from benchmarks._rows import BenchRow
from shared.audiences.preparation import IdentifierColumns, prepare_columns
from tests.audience_reference import CORPUS_SIZE, generate_corpus, prepare_reference

TARGET_USERS_PER_SECOND = 300_000
TARGET_BULK_RATIO = 5.0
BULK_BATCH_SIZE = 10_000
BULK_BEFORE_COMMIT = "042a345"
ROOT = Path(__file__).resolve().parents[1]
# One bulk pass in a child process (this checkout's code, or the one before): warm once, then time one
# pass; CPU time is the whole process's (the engine's threads included).
_BULK_CHILD = """
import json, sys, time
from pathlib import Path
from shared.activation.hashing import batch_documents, csv_header, hash_users, load_users_file
from shared.dataplane.runner import query_runner
path = Path(sys.argv[1])
def once():
    with query_runner(function_mb=2048) as engine:
        users = load_users_file(engine, path, csv_header(path), None)
        hashed = hash_users(engine, users, default_country=None, batch_size=10_000)
        sum(len(document) for _, document in batch_documents(engine, users, 1, hashed.batches))
        return hashed.rows
once()
cpu, wall = time.process_time(), time.perf_counter()
rows = once()
print(json.dumps({"cpu": time.process_time() - cpu, "wall": time.perf_counter() - wall, "rows": rows}))
"""
_NON_DIGIT_BYTES = bytes(byte for byte in range(256) if not 0x30 <= byte <= 0x39)


# --- the run ------------------------------------------------------------------------------------


def _seconds(action: Callable[[], object]) -> tuple[float, float]:
    """CPU and wall seconds of ``action``.

    CPU time of this (single-threaded) process is the per-core throughput, and less disturbed than wall
    time when other work shares the cores; wall time is reported beside it. Collect first so no run pays
    for the previous one's garbage.
    """
    gc.collect()
    wall, cpu = time.perf_counter(), time.process_time()
    action()
    return time.process_time() - cpu, time.perf_counter() - wall


def _hash_floor_seconds(size: int) -> float:
    """CPU time of the SHA-256 digests alone: two per user (e-mail, phone; names and countries repeat)."""
    values = [f"first.last{index}@example.com".encode() for index in range(2 * size)]
    sha256 = hashlib.sha256
    return _seconds(lambda: [sha256(value).hexdigest() for value in values])[0]


def minimal_python(records: Sequence[dict[str, str | None]]) -> list[tuple[str | None, ...]]:
    """The least work a Python pass can do for these users (not a correct preparation: a lower bound).

    Columns from the records, e-mails trimmed and lower-cased, phones reduced to their digits, both
    hashed; names and countries hashed once per distinct value; rows zipped. No validation, phone
    rules, duplicate check, drop counting or report.
    """
    get, sha256, non_digits = dict.get, hashlib.sha256, _NON_DIGIT_BYTES
    user_ids, emails, phones, first_names, last_names, countries = (
        list(map(get, records, repeat(key)))
        for key in ("user_id", "email", "phone", "firstName", "lastName", "country")
    )
    hashed_emails = [sha256(raw.strip().lower().encode()).hexdigest() if raw else "" for raw in emails]
    hashed_phones = [
        sha256(raw.strip().encode().translate(None, non_digits)).hexdigest() if raw else "" for raw in phones
    ]
    repeated = []
    for column in (first_names, last_names, countries):
        hashed = {raw: sha256(raw.lower().encode()).hexdigest() if raw else "" for raw in Counter(column)}
        repeated.append(list(map(hashed.__getitem__, column)))
    return list(zip(user_ids, hashed_emails, hashed_phones, *repeated, strict=True))


def write_users_csv(corpus: Sequence[dict[str, str | None]], path: Path) -> None:
    """The corpus as the users file SelectUsers stores (``USERS_CSV_COLUMNS``)."""
    columns = ("user_id", "email", "firstName", "lastName", "phone", "country")
    with path.open("w", encoding="utf-8", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(columns)
        writer.writerows([record.get(column) or "" for column in columns] for record in corpus)


def bulk_pass(path: Path) -> int:
    """NormaliseAndHash's work in the engine on a users CSV: read, decide, de-duplicate, count, write
    every batch's JSON document. The number of rows to upload."""
    from shared.activation.hashing import batch_documents, csv_header, hash_users, load_users_file
    from shared.dataplane.runner import query_runner

    with query_runner(function_mb=2048) as engine:
        users = load_users_file(engine, path, csv_header(path), None)
        hashed = hash_users(engine, users, default_country=None, batch_size=BULK_BATCH_SIZE)
        written = sum(len(document) for _, document in batch_documents(engine, users, 1, hashed.batches))
        assert written > 0
        return hashed.rows


def _before_code(folder: Path) -> Path:
    """The ``shared`` package of ``BULK_BEFORE_COMMIT``, unpacked under ``folder``."""
    code = folder / f"code-{BULK_BEFORE_COMMIT}"
    archive = subprocess.run(
        ["git", "archive", BULK_BEFORE_COMMIT, "shared"], cwd=ROOT, check=True, capture_output=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(code, filter="data")
    return code


def bulk_child(code: Path, users_csv: Path) -> dict[str, float]:
    """One timed bulk pass of the code under ``code`` in a fresh process: cpu, wall seconds, rows."""
    result = subprocess.run(
        [sys.executable, "-c", _BULK_CHILD, str(users_csv)],
        cwd=code,
        env={**os.environ, "PYTHONPATH": str(code)},
        capture_output=True,
        text=True,
        check=True,
    )
    measured: dict[str, float] = json.loads(result.stdout.strip().splitlines()[-1])
    return measured


def _profile(corpus: Sequence[dict[str, str | None]]) -> str:
    """Share of the fast path's time per step (Python functions, builtins counted in their caller)."""
    profiler = cProfile.Profile(builtins=False)
    gc.collect()
    profiler.runcall(lambda: prepare_columns(IdentifierColumns.from_records(corpus)))
    stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    own = {function: entry[2] for (_, _, function), entry in stats.items()}
    total = sum(own.values())
    steps = {
        "e-mail": own.get("_email_column", 0.0),
        "phone": own.get("_phone_column", 0.0),
        "rows+dedupe": own.get("_assemble_rows", 0.0),
        "dicts to columns": own.get("from_records", 0.0),
        "names": own.get("_name_column", 0.0) + own.get("_prepared_name", 0.0),
        "country": own.get("_country_column", 0.0) + own.get("_prepared_country", 0.0),
    }
    steps["report+rest"] = total - sum(steps.values())
    return ", ".join(f"{step} {seconds / total:.0%}" for step, seconds in steps.items())


def run(size: int = CORPUS_SIZE, repeats: int = 5, *, before: bool = True) -> list[BenchRow]:
    """Time both implementations on one corpus of ``size`` users; users/s per CPU-second (= per core).

    The implementations and the minimal pass alternate within each repeat, so all see the same machine;
    the best run of each counts and the spread of the ratio over the repeats goes into the notes.
    """
    corpus = generate_corpus(size)
    fast_runs: list[tuple[float, float]] = []
    reference_runs: list[tuple[float, float]] = []
    minimal_runs: list[tuple[float, float]] = []
    load_before = os.getloadavg()[0]
    bulk_runs: list[tuple[float, float]] = []
    folder = Path(tempfile.mkdtemp(prefix="hashing-bench-"))
    users_csv = folder / "users.csv"
    write_users_csv(corpus, users_csv)
    expected_rows = len(prepare_columns(IdentifierColumns.from_records(corpus)).rows)
    if bulk_pass(users_csv) != expected_rows:  # warm the engine's import, and check it agrees
        raise RuntimeError("the bulk path kept another number of rows than the Python path")
    for _ in range(repeats):
        fast_runs.append(_seconds(lambda: prepare_columns(IdentifierColumns.from_records(corpus))))
        reference_runs.append(_seconds(lambda: prepare_reference(corpus)))
        minimal_runs.append(_seconds(lambda: minimal_python(corpus)))
        bulk_runs.append(_seconds(lambda: bulk_pass(users_csv)))
    now_children: list[dict[str, float]] = []
    before_children: list[dict[str, float]] = []
    if before:
        before_code = _before_code(folder)
        for _ in range(repeats):
            now_children.append(bulk_child(ROOT, users_csv))
            before_children.append(bulk_child(before_code, users_csv))
    shutil.rmtree(folder)
    load = max(load_before, os.getloadavg()[0])
    reference_wall = min(wall for _, wall in reference_runs)
    bulk_cpu, bulk_wall = (min(run[index] for run in bulk_runs) for index in (0, 1))
    bulk_ratios = sorted(r / b for (_, r), (_, b) in zip(reference_runs, bulk_runs, strict=True))
    bulk_ratio = reference_wall / bulk_wall
    fast_cpu, fast_wall = (min(run[index] for run in fast_runs) for index in (0, 1))
    fast, reference = size / fast_cpu, size / min(cpu for cpu, _ in reference_runs)
    minimal = size / min(cpu for cpu, _ in minimal_runs)
    ratios = sorted(r / f for (f, _), (r, _) in zip(fast_runs, reference_runs, strict=True))
    floor = size / _hash_floor_seconds(size)
    profile = _profile(corpus)
    first_names, last_names = ({record[key] for record in corpus} for key in ("firstName", "lastName"))
    distinct = f"{len(first_names):,} distinct first and {len(last_names):,} last names"
    passed = fast >= TARGET_USERS_PER_SECOND
    verdict = (
        "target met"
        if passed
        else f"target missed: SHA-256 alone allows {floor:,.0f} users/s here and the minimal Python pass "
        f"{minimal:,.0f} (the fast path is {fast / minimal:.0%} of it)"
    )
    shared_notes = (
        f"{size} synthetic users ({distinct}), best of {repeats} alternating runs, CPU time of 1 thread, "
        f"load average {load:.1f} on os.cpu_count()={os.cpu_count()}"
    )
    rows = [
        BenchRow(
            name="audience_hashing.fast_path",
            value=round(fast),
            unit="users/s",
            baseline=round(reference),
            ratio=round(fast / reference, 2),
            target=TARGET_USERS_PER_SECOND,
            passed=passed,
            notes=(
                f"prepare_columns incl. dicts to columns; EMAIL+PHONE+FN+LN+COUNTRY; {verdict}; "
                f"wall {size / fast_wall:,.0f} users/s; profile: {profile}; "
                f"ratio per run {ratios[0]:.2f}-{ratios[-1]:.2f}; {shared_notes}"
            ),
        ),
        BenchRow(
            name="audience_hashing.reference",
            value=round(reference),
            unit="users/s",
            baseline=None,
            ratio=None,
            target=None,
            passed=None,
            notes=f"prepare_reference: per record, per field, public normalisers; {shared_notes}",
        ),
        BenchRow(
            name="audience_hashing.minimal_python",
            value=round(minimal),
            unit="users/s",
            baseline=None,
            ratio=None,
            target=None,
            passed=None,
            notes="lower bound for a Python pass: columns, trim/lower/digits, one SHA-256 per e-mail and "
            "phone and per distinct name and country, rows zipped; no validation, phone rules, "
            f"duplicates or report (not a correct preparation); {shared_notes}",
        ),
        BenchRow(
            name="audience_hashing.sha256_floor",
            value=round(floor),
            unit="users/s",
            baseline=None,
            ratio=None,
            target=None,
            passed=None,
            notes=f"hashlib.sha256(...).hexdigest() only, 2 per user: the ceiling for any implementation "
            f"that hashes with hashlib; {shared_notes}",
        ),
        BenchRow(
            name="audience_hashing.bulk_engine",
            value=round(size / bulk_wall),
            unit="users/s",
            baseline=round(size / reference_wall),
            ratio=round(bulk_ratio, 2),
            target=f">= {TARGET_BULK_RATIO:g}x the plain Python pass",
            passed=bulk_ratio >= TARGET_BULK_RATIO,
            notes=(
                f"wall time, users CSV on disk -> every JSON batch (read, normalise, hash, de-duplicate, "
                f"report) in DuckDB with {os.cpu_count()} threads, against prepare_reference (1 thread, "
                f"from the records) in the same run; "
                f"ratio per run {bulk_ratios[0]:.2f}-{bulk_ratios[-1]:.2f}; "
                f"bulk CPU {size / bulk_cpu:,.0f} users/CPU-s; the tuned Python path (prepare_columns) "
                f"{size / fast_wall:,.0f} users/s wall; {shared_notes}"
            ),
        ),
    ]
    if not before:
        return rows
    now_cpu, before_cpu = (min(run["cpu"] for run in runs) for runs in (now_children, before_children))
    now_wall, before_wall = (min(run["wall"] for run in runs) for runs in (now_children, before_children))
    before_rows = int(before_children[0]["rows"])
    return [
        *rows,
        BenchRow(
            name="audience_hashing.bulk_vs_before",
            value=round(size / now_cpu),
            unit="users/CPU-s",
            baseline=round(size / before_cpu),
            ratio=round(before_cpu / now_cpu, 2),
            target=None,
            passed=None,
            notes=(
                f"bulk path (users CSV -> every JSON batch), each pass in a fresh child process, "
                f"alternating, best of {repeats}: phones read with libphonenumber's plans (in the engine as "
                f"parse reads them, the rest in Python) against the "
                f"code of {BULK_BEFORE_COMMIT} (ten hand-written dialing rules, decided per number shape); "
                f"CPU of the whole process (engine threads included); wall {size / now_wall:,.0f} against "
                f"{size / before_wall:,.0f} users/s; rows kept {expected_rows:,} against {before_rows:,} "
                f"(numbers of countries the old rules did not know are read now); {shared_notes}"
            ),
        ),
    ]


if __name__ == "__main__":
    for result in run():
        print(json.dumps(result))
