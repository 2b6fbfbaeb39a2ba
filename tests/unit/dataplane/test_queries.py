"""Every named query of the data plane stays portable: it parses, names no function sqlglot does not
know, and transpiles to Athena's dialect (``unsupported_level=RAISE``) as the committed Athena file
says. The queries named ``read_*`` read the engine's own files (a CSV, a Parquet file, its rejects
table); on Athena the same data is a Glue table over the Parquet the sync writes (docs/scaling.md),
so they are not transpiled. Nor are the activation's ``activation_*`` queries yet: they run in the
activation step's own engine over the users file copied into its work directory, with the engine's
macros (``activation_macros``: Python's strip, ASCII and digest tests) and tables of the Python
normaliser's decisions registered from numpy; making them portable (the macros inlined, one
statement a file) is left to do (docs/data-plane.md, "Activation"). sqlglot does not validate: each
query's results are tested on edge rows (tests/unit/datasources/test_engine_verdicts.py,
test_version_objects.py, tests/unit/activation/test_hashing.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlglot
from sqlglot import exp
from sqlglot.errors import ErrorLevel

from shared.dataplane import queries

ATHENA = Path(queries.QUERIES).parent / "athena"
ENGINE_LOCAL = ("read_", "activation_")
PORTABLE = [name for name in queries.names() if not name.startswith(ENGINE_LOCAL)]


def athena_sql(name: str) -> str:
    [statement] = sqlglot.transpile(
        queries.text(name), read="duckdb", write="athena", unsupported_level=ErrorLevel.RAISE, pretty=True
    )
    return statement + "\n"


@pytest.mark.parametrize("name", PORTABLE)
def test_each_query_names_only_functions_sqlglot_knows(name: str) -> None:
    tree = sqlglot.parse_one(queries.text(name), read="duckdb")
    assert {function.name for function in tree.find_all(exp.Anonymous)} == set()


@pytest.mark.parametrize("name", PORTABLE)
def test_each_query_transpiles_to_athena_as_committed(name: str) -> None:
    committed = ATHENA / f"{name}.sql"
    assert committed.is_file(), f"write {committed} (python -m tests.unit.dataplane.test_queries)"
    assert athena_sql(name) == committed.read_text(encoding="utf-8")


def test_no_athena_file_outlives_its_query() -> None:
    assert sorted(path.stem for path in ATHENA.glob("*.sql")) == PORTABLE


def test_an_unknown_function_is_found() -> None:
    tree = sqlglot.parse_one("SELECT no_such_function(a) FROM t", read="duckdb")
    assert {function.name for function in tree.find_all(exp.Anonymous)} == {"no_such_function"}


def test_the_query_parameters_are_the_ones_the_file_names() -> None:
    assert queries.placeholders("reference_orders") == frozenset({"now"})


if __name__ == "__main__":  # write the Athena files after changing a query, then review the diff
    ATHENA.mkdir(exist_ok=True)
    for stale in ATHENA.glob("*.sql"):
        stale.unlink()
    for query in PORTABLE:
        (ATHENA / f"{query}.sql").write_text(athena_sql(query), encoding="utf-8")
