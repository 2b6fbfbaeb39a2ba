"""Benchmarks (``make bench``). Each module ``benchmarks/<name>.py`` exposes ``run() -> list[dict]``
with rows ``{"name", "value", "unit", "baseline", "ratio", "target", "passed", "notes"}``."""
