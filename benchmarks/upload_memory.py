"""Benchmark: peak memory of checking a large uploaded audience list, read as a stream against read whole.

A 1M-user CSV (the size of the wizard benchmark's shop) is put into S3 on a moto server running in its
own process, so only the reader's memory is counted. Each way of reading runs in a fresh child process
that imports everything first; its peak resident memory above what was resident just before reading
is the figure. "whole" is how the list was read before (``get`` the object, decode it, ``io.StringIO``);
"stream" is how the service reads every row now: the activation's SelectUsers step checking each row
as it writes the snapshot (``shared.activation.users_files.snapshot_rows_of_csv``; accepting the upload
reads only its header). Run
``python -m benchmarks upload_memory``.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from typing import Any

from benchmarks._rows import BenchRow, bench_row

USERS = 1_000_000
ORG = "org-bench"
UPLOAD = "0b6f1c9e-2a43-4a7e-9d1f-5e0c2b7a8d34"
BUCKET = "bench-data"
REGION = "eu-west-1"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _users_csv(count: int) -> bytes:
    rows = (f"u{i},buyer{i}@example.com,Zoë,O'Brien,07700 9{i % 100_000:05d},0.8,GB" for i in range(count))
    return ("user_id,email,firstName,lastName,phone,score,country\n" + "\n".join(rows) + "\n").encode()


def _store(endpoint: str) -> Any:
    from shared import aws
    from shared.repositories.blobs import S3BlobStore
    from tests.unit.deployment import deployed_settings

    s3 = aws.client("s3", deployed_settings(aws_endpoint_url=endpoint), aws.session())
    return S3BlobStore(s3, BUCKET, "alias/none")


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith(f"{field}:"))


def _reset_peak() -> None:
    """Reset the process's resident high-water mark (VmHWM) to what is resident now (Linux)."""
    with open("/proc/self/clear_refs", "w") as clear_refs:
        clear_refs.write("5")


def _measure(way: str, endpoint: str) -> dict[str, float]:
    """In a child process: read the upload ``way`` and report the peak memory it added, in MB."""
    import contextlib
    import csv
    import io

    from pydantic import ValidationError

    from shared.activation.users_files import snapshot_rows_of_csv
    from shared.audiences.identifiers import AudienceUser
    from shared.audiences.uploads import upload_key

    store = _store(endpoint)
    _reset_peak()  # the imports' own transient peak must not hide (or be) the figure
    before = _status_kib("VmRSS")
    started = time.perf_counter()
    if way == "stream":
        with store.open(upload_key(ORG, UPLOAD)) as stream:
            count = sum(1 for _ in snapshot_rows_of_csv(stream))
    else:  # the reading this replaced: the object whole, decoded, then parsed from a StringIO
        reader = csv.reader(io.StringIO(store.get(upload_key(ORG, UPLOAD)).decode("utf-8-sig")))
        header = next(reader)
        count = 0
        for row in reader:
            cells = {name: value for name, value in zip(header, row, strict=False) if name and value.strip()}
            with contextlib.suppress(ValidationError):  # the check collects problems; all rows are valid here
                AudienceUser.model_validate(cells)
            count += 1
    seconds = time.perf_counter() - started
    peak = _status_kib("VmHWM")
    return {"count": count, "added_mb": (peak - before) / 1024, "seconds": seconds}


def run(users: int = USERS) -> list[BenchRow]:
    port = _free_port()
    endpoint = f"http://127.0.0.1:{port}"
    env = {**os.environ, "AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "AWS_REGION": REGION}
    server = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        os.environ.update({k: env[k] for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION")})
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        store = _store(endpoint)
        store._s3.create_bucket(Bucket=BUCKET, CreateBucketConfiguration={"LocationConstraint": REGION})
        from shared.audiences.uploads import upload_key

        data = _users_csv(users)
        store._s3.put_object(Bucket=BUCKET, Key=upload_key(ORG, UPLOAD), Body=data)
        size_mb = len(data) / 1e6
        del data
        results = {}
        for way in ("whole", "stream"):
            child = subprocess.run(
                [sys.executable, "-m", "benchmarks.upload_memory", way, endpoint],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            results[way] = json.loads(child.stdout.strip().splitlines()[-1])
    finally:
        server.terminate()
        server.wait()
    whole, stream = results["whole"], results["stream"]
    assert whole["count"] == stream["count"] == users
    note = f"{users:,} users, {size_mb:.0f} MB CSV from a moto server; peak RSS added by the read"
    return [
        bench_row(
            "upload_memory.stream_peak",
            round(stream["added_mb"], 1),
            "MB",
            baseline=round(whole["added_mb"], 1),
            notes=f"{note}; read whole (the previous reading) is the baseline; "
            f"{stream['seconds']:.1f} s streamed, {whole['seconds']:.1f} s whole",
        )
    ]


if __name__ == "__main__":
    if len(sys.argv) == 3:
        print(json.dumps(_measure(sys.argv[1], sys.argv[2])))
    else:
        from benchmarks._rows import print_rows

        print_rows(run())
