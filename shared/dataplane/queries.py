"""The named queries: one ``.sql`` file per query under ``queries/``, values bound as parameters.

A query is run by its name (the file's stem). Identifiers are never formatted into a query; the only
text a caller chooses is the parameter values (``$name`` in the file). ``tests/unit/dataplane``
transpiles every file to Athena's dialect and tests its results on edge rows.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import duckdb

QUERIES = Path(__file__).resolve().parent / "queries"
# The table macros a query may call, each with the query that defines it (``CREATE OR REPLACE TEMP
# MACRO``). A macro is defined on a connection by each query that calls it, just before it runs, so
# a session that reads no stored version never pays for one (about 2 ms, a tenth of opening the
# connection: docs/data-plane.md).
MACROS = {"stored_customers": "read_stored_customers"}


def text(name: str) -> str:
    """The SQL of the named query."""
    path = QUERIES / f"{name}.sql"
    if not path.is_file():
        raise KeyError(f"no query named {name}")
    return path.read_text(encoding="utf-8")


def names() -> list[str]:
    return sorted(path.stem for path in QUERIES.glob("*.sql"))


def run(
    connection: duckdb.DuckDBPyConnection, name: str, parameters: dict[str, Any] | None = None
) -> duckdb.DuckDBPyConnection:
    """Execute the named query with ``parameters`` bound (those it names: a caller may pass a shared
    set, such as the cell patterns); the connection holds its result."""
    used = placeholders(name)
    define_macros(connection, name)
    return connection.execute(text(name), {k: v for k, v in (parameters or {}).items() if k in used})


def define_macros(connection: duckdb.DuckDBPyConnection, name: str) -> None:
    """Define on ``connection`` the table macros (``MACROS``) the named query calls."""
    sql = text(name)
    for macro, definition in MACROS.items():
        if definition != name and re.search(rf"\b{macro}\s*\(", sql):
            connection.execute(text(definition))


def placeholders(name: str) -> frozenset[str]:
    """The ``$name`` parameters the named query takes."""
    return frozenset(re.findall(r"\$([A-Za-z_][A-Za-z0-9_]*)", text(name)))
