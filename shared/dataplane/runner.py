"""Named queries over an open engine (``engine.Workspace``), for callers that work in several steps:
run a query of several statements, fetch a small result as tuples, stream a large one, and hand the
engine numpy columns as a table (scanned in place, never a Python object per row).

Used by the activation steps (``shared.activation.hashing``). The SQL is in ``queries/``; table names
are the queries' own, and the only ones a caller names are those the queries read
(``register``/``insert``), checked to be plain identifiers.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb
import numpy as np

from shared.dataplane import queries
from shared.dataplane.engine import Workspace, session


class UnreadableInput(Exception):
    """The engine could not read a file it was given (not UTF-8, or not CSV as the query reads it).
    The message names no value of the file."""


class QueryRunner:
    """An engine workspace, run by query name."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self._connection = workspace.connection
        self._registered: dict[str, object] = {}

    def path(self, name: str) -> Path:
        """A file of this name in the invocation's work directory (``/tmp`` in Lambda)."""
        return self.workspace.path(name)

    def run(self, name: str, parameters: Mapping[str, object] | None = None) -> None:
        """Execute the named query, its statements in order."""
        self._execute(name, parameters)

    def rows(self, name: str, parameters: Mapping[str, object] | None = None) -> list[tuple[Any, ...]]:
        """The named query's result as tuples (a small result: counts, a few distinct values)."""
        return self._execute(name, parameters).fetchall()

    def columns(
        self, name: str, parameters: Mapping[str, object] | None = None
    ) -> dict[str, np.ndarray[Any, Any]]:
        """The named query's result as numpy columns by name (a result of bounded size; text columns
        hold Python strings)."""
        return dict(self._execute(name, parameters).fetchnumpy())

    def batches(
        self, name: str, parameters: Mapping[str, object] | None = None, size: int = 1
    ) -> Iterator[list[tuple[Any, ...]]]:
        """The named query's result ``size`` rows at a time, as the engine produces them."""
        cursor = self._execute(name, parameters)
        while chunk := cursor.fetchmany(size):
            yield chunk

    def write_parquet(self, name: str, parameters: Mapping[str, object] | None, path: Path) -> None:
        """The named query's result (one SELECT) written to ``path`` as Parquet, as the engine
        produces it (never whole in memory)."""
        (statement,) = _statements(name)
        used = {key: value for key, value in (parameters or {}).items() if f"${key}" in statement}
        queries.define_macros(self._connection, name)
        self._connection.sql(statement, params=used or None).write_parquet(str(path))

    def register(self, table: str, columns: Mapping[str, np.ndarray[Any, Any] | list[Any]]) -> None:
        """numpy columns (same length; None or NaN is NULL) as the table the named queries read as
        ``table``, scanned in place."""
        _identifier(table)
        frame = {key: np.asarray(value) for key, value in columns.items()}
        self._registered[table] = frame  # the engine scans the arrays: keep them alive
        self._connection.register(table, frame)

    def insert(self, table: str, columns: Mapping[str, np.ndarray[Any, Any] | list[Any]]) -> None:
        """Append columns (in the table's column order) to a table a named query created."""
        _identifier(table)
        frame = {key: np.asarray(value, dtype=object) for key, value in columns.items()}
        if not len(next(iter(frame.values()), ())):
            return
        self._connection.register("incoming_rows", frame)
        try:
            self._connection.execute(f"INSERT INTO {table} SELECT * FROM incoming_rows")  # noqa: S608 (an identifier)
        finally:
            self._connection.unregister("incoming_rows")

    def _execute(self, name: str, parameters: Mapping[str, object] | None) -> duckdb.DuckDBPyConnection:
        cursor = self._connection
        queries.define_macros(cursor, name)
        for statement in _statements(name):
            used = {key: value for key, value in (parameters or {}).items() if f"${key}" in statement}
            try:
                cursor = self._connection.execute(statement, used or None)
            except (duckdb.InvalidInputException, duckdb.ConversionException) as exc:
                # Its text quotes the offending line: only the kind of problem goes on.
                raise UnreadableInput(f"{name}: {type(exc).__name__}") from None
        return cursor


def _statements(name: str) -> list[str]:
    """The statements of a named query: a file may hold several, each ending in ``;`` at a line's end."""
    return [part for part in queries.text(name).split(";\n") if part.strip()]


def _identifier(table: str) -> None:
    if not table.isidentifier():
        raise ValueError(f"not a table name: {table!r}")


@contextmanager
def query_runner(
    function_mb: int | None = None, threads: int | None = None, memory_limit_mb: int | None = None
) -> Iterator[QueryRunner]:
    """An engine for one invocation (``engine.session``: a fixed ``memory_limit_mb``, else a share of
    the function's memory), run by query name."""
    with session(function_mb, threads, memory_limit_mb) as workspace:
        yield QueryRunner(workspace)
