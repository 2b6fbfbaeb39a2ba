"""The hashing benchmark runs and reports in the shared result shape (speed is not asserted here)."""

from benchmarks.audience_hashing import run

RESULT_KEYS = {"name", "value", "unit", "baseline", "ratio", "target", "passed", "notes"}


def test_benchmark_reports_both_implementations_side_by_side() -> None:
    # Given / When a tiny run
    results = run(size=500, repeats=2)

    # Then
    assert [result["name"] for result in results] == [
        "audience_hashing.fast_path",
        "audience_hashing.reference",
        "audience_hashing.sha256_floor",
    ]
    assert all(set(result) == RESULT_KEYS for result in results)
    assert results[0]["baseline"] == results[1]["value"]
    assert results[0]["unit"] == "users/s"
    assert results[0]["target"] == 300_000
