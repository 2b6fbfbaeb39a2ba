"""Recording benchmark results: a run of some modules keeps every other module's rows."""

from benchmarks.__main__ import merge_results

EARLIER = "2026-11-22T10:00:00+00:00"
NOW = "2026-11-23T16:00:00+00:00"


def _row(module: str, name: str, value: float, **extra: object) -> dict[str, object]:
    return {"module": module, "name": name, "value": value, **extra}


def test_a_module_run_replaces_its_own_rows_and_keeps_the_others() -> None:
    # Given a file with rows of three modules
    previous = {
        "measured_at": EARLIER,
        "results": [
            _row("audience_hashing", "audience_hashing.fast_path", 215_000.0),
            _row("predict", "cold_start.speedup", 2.8),
            _row("predict", "cold_start.gone", 1.0),
            _row("wizard", "wizard.sync", 107.9),
        ],
    }

    # When only predict ran
    merged = merge_results(previous, ["predict"], [_row("predict", "cold_start.speedup", 3.1)], NOW)

    # Then predict's rows are the new ones only, with their time; the others are untouched
    assert merged["results"] == [
        _row("audience_hashing", "audience_hashing.fast_path", 215_000.0),
        _row("predict", "cold_start.speedup", 3.1, measured_at=NOW),
        _row("wizard", "wizard.sync", 107.9),
    ]
    assert merged["measured_at"] == NOW


def test_a_kept_row_keeps_its_own_time() -> None:
    # Given a row measured at its own time
    previous = {"measured_at": NOW, "results": [_row("wizard", "wizard.sync", 1.0, measured_at=EARLIER)]}

    # When another module runs
    merged = merge_results(previous, ["predict"], [], NOW)

    # Then the row still says when it was measured
    assert merged["results"] == [_row("wizard", "wizard.sync", 1.0, measured_at=EARLIER)]


def test_the_first_run_writes_only_its_rows() -> None:
    # Given no file yet / When a module runs
    merged = merge_results(None, ["predict"], [_row("predict", "x", 1.0)], NOW)

    # Then
    assert merged["results"] == [_row("predict", "x", 1.0, measured_at=NOW)]
