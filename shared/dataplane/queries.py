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
    return connection.execute(text(name), {k: v for k, v in (parameters or {}).items() if k in used})


def placeholders(name: str) -> frozenset[str]:
    """The ``$name`` parameters the named query takes."""
    return frozenset(re.findall(r"\$([A-Za-z_][A-Za-z0-9_]*)", text(name)))
