"""The one place the columnar engine (DuckDB) is opened.

A connection is opened per invocation (a warm container serves other organizations: nothing is kept
between them) with every setting passed at connect, as dbt-duckdb's environments module does:

* ``memory_limit``: about half the function's memory (``AWS_LAMBDA_FUNCTION_MEMORY_SIZE``), so the
  engine spills to ``/tmp`` rather than the function being killed, and Python keeps the other half;
  or a fixed limit in MB that the caller passes (the activation step's, ``Settings.engine_memory_mb``
  read in the wiring: its tasks' peak is the engine's limit plus Python's arrays, so a limit that
  followed the function's memory would raise the peak with every raise of the memory). The only
  variable this module reads is Lambda's own ``AWS_LAMBDA_FUNCTION_MEMORY_SIZE``;
* ``threads``: the function's vCPUs;
* ``temp_directory`` and ``home_directory`` under the invocation's own work directory in ``/tmp``;
* no extension is installed, downloaded or autoloaded (the Lambda has no internet and no extension
  is shipped), community extensions are off, and the configuration is locked after connect.

The readers of stored versions call the table macro ``stored_customers(path)``
(``read_stored_customers.sql``: a customers Parquet file stored before the later columns, read with
them NULL), so how an older version reads is said once; ``queries`` defines it on the connection of a
query that calls it, not on every connection.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import duckdb

# Used when not running in Lambda (tests, the local stack, benchmarks): the sync function's memory.
DEFAULT_FUNCTION_MB = 2048
ENGINE_SHARE = 0.5
MIN_ENGINE_MB = 128


@dataclass(frozen=True)
class EngineSettings:
    memory_limit_mb: int
    threads: int
    workdir: Path


def settings_for(
    workdir: Path,
    function_mb: int | None = None,
    threads: int | None = None,
    memory_limit_mb: int | None = None,
) -> EngineSettings:
    """The engine's settings: a fixed ``memory_limit_mb`` where the caller gives one (a function whose
    tasks must stay under a peak whatever its memory: more memory is more CPU on Lambda), else
    ``ENGINE_SHARE`` of a function with ``function_mb`` of memory, by default this Lambda's
    (``AWS_LAMBDA_FUNCTION_MEMORY_SIZE``)."""
    if memory_limit_mb is not None:
        limit_mb = memory_limit_mb
    else:
        if function_mb is None:
            function_mb = int(os.environ.get("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", DEFAULT_FUNCTION_MB))
        limit_mb = int(function_mb * ENGINE_SHARE)
    return EngineSettings(
        memory_limit_mb=max(MIN_ENGINE_MB, limit_mb),
        threads=threads or max(1, os.cpu_count() or 1),
        workdir=workdir,
    )


def connect(settings: EngineSettings) -> duckdb.DuckDBPyConnection:
    """An in-memory database spilling to ``settings.workdir``; every setting given here, at connect."""
    spill = settings.workdir / "spill"
    home = settings.workdir / "home"
    spill.mkdir(parents=True, exist_ok=True)
    home.mkdir(parents=True, exist_ok=True)
    config: dict[str, str | bool | int | float | list[str]] = {
        "memory_limit": f"{settings.memory_limit_mb}MB",
        "threads": settings.threads,
        "temp_directory": str(spill),
        "home_directory": str(home),
        "extension_directory": str(home / "extensions"),
        "autoinstall_known_extensions": False,
        "autoload_known_extensions": False,
        "allow_community_extensions": False,
        # Rows keep the order they were read in unless a query orders them: the line numbers of a
        # file's records rest on it.
        "preserve_insertion_order": True,
        "lock_configuration": True,
    }
    return duckdb.connect(":memory:", config=config)


@contextmanager
def session(
    function_mb: int | None = None, threads: int | None = None, memory_limit_mb: int | None = None
) -> Iterator[Workspace]:
    """A work directory under the temporary directory and a connection spilling there (its memory
    limit as ``settings_for`` gives it); both gone after."""
    workdir = Path(tempfile.gettempdir()) / f"dataplane-{uuid.uuid4().hex}"
    workdir.mkdir(parents=True)
    connection = connect(settings_for(workdir, function_mb, threads, memory_limit_mb))
    try:
        yield Workspace(connection, workdir)
    finally:
        connection.close()
        shutil.rmtree(workdir, ignore_errors=True)


@dataclass(frozen=True)
class Workspace:
    """An open engine and the invocation's directory for the files it reads and writes."""

    connection: duckdb.DuckDBPyConnection
    workdir: Path

    def path(self, name: str) -> Path:
        return self.workdir / name
