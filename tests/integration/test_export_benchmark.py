"""The end-to-end export benchmark runs against the local stack and reports in the shared result shape
(speed is not asserted here)."""

from benchmarks.audience_export import run
from local.stack import LocalStack

RESULT_KEYS = {"name", "value", "unit", "baseline", "ratio", "target", "passed", "notes"}


def test_export_benchmark_reports_time_split_calls_and_http_overhead(stack: LocalStack) -> None:
    # Given / When a tiny run on the session's stack
    results = run(size=300, http_size=200, stack=stack)

    # Then
    by_name = {result["name"]: result for result in results}
    assert list(by_name) == [
        "audience_export.library",
        "audience_export.platform_calls",
        "audience_export.http",
    ]
    assert all(set(result) == RESULT_KEYS for result in results)
    assert by_name["audience_export.library"]["target"] == 15.0
    for stage in ("prepare", "snapshot", "s3_put", "record_save", "upload", "other"):
        assert stage in by_name["audience_export.library"]["notes"]
    # One audience created, one batch of users, one read of the seed's operation_status
    assert by_name["audience_export.platform_calls"]["value"] == 3
    assert by_name["audience_export.http"]["baseline"] is not None
