"""The data plane: the only code that talks to the columnar engine (DuckDB), docs/data-plane.md.

``engine`` opens a connection per invocation with every setting passed at connect; each query is a
named ``.sql`` file under ``queries/``, its values bound as parameters. Callers name queries and pass
values and numpy columns; they never write SQL, name tables or choose paths.
"""
