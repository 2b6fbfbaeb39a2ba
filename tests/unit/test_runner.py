"""The local runner holds each function to Lambda's rules: its own process and environment, its
``Timeout``, the response size limit, and Lambda's exact error payloads (the handbook's
reference/aws-facts.md, "Lambda errors seen by Step Functions")."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from local.runner import MAX_RESPONSE_BYTES, FunctionRunner
from local.template import FunctionSpec

CODE = Path(__file__).parent / "runner_function"
SPECS = {
    "Quick": FunctionSpec("Quick", CODE, "handler.lambda_handler", {}, timeout=5, memory_size=256),
    "Short": FunctionSpec("Short", CODE, "handler.lambda_handler", {}, timeout=1, memory_size=128),
}
ENVIRONMENTS = {"Quick": {"ONLY_QUICK": "yes", "SHARED": "quick"}, "Short": {"SHARED": "short"}}


@pytest.fixture(scope="module")
def runner() -> Iterator[FunctionRunner]:
    built = FunctionRunner(SPECS, ENVIRONMENTS.__getitem__, {"Quick": "local-Quick", "Short": "local-Short"})
    yield built
    built.stop()


def test_a_function_sees_exactly_its_own_environment(runner: FunctionRunner) -> None:
    # When each function reports its environment
    quick = runner.invoke("Quick", {}).result_or_raise()["environment"]
    short = runner.invoke("Short", {}).result_or_raise()["environment"]
    # Then each has its own variables and nothing of the other's or of this process
    assert quick == ENVIRONMENTS["Quick"]
    assert short == ENVIRONMENTS["Short"]


def test_the_context_counts_down_from_the_functions_timeout(runner: FunctionRunner) -> None:
    # When
    answer = runner.invoke("Quick", {}).result_or_raise()
    # Then
    assert 4_000 < answer["remaining_ms"] <= 5_000
    assert answer["function_name"] == "local-Quick"
    assert answer["memory_limit_in_mb"] == 256


def test_a_warm_worker_serves_the_next_invocation_and_a_concurrent_one_gets_its_own(
    runner: FunctionRunner,
) -> None:
    # Given a warm worker
    runner.recycle("Quick")
    first = runner.invoke("Quick", {})
    second = runner.invoke("Quick", {})
    # Then the first invocation was a cold start, the next one reused its process
    assert first.cold_start
    assert not second.cold_start
    assert first.result["pid"] == second.result["pid"]
    # When two invocations run at once
    pids: list[int] = []
    calls = [
        threading.Thread(target=lambda: pids.append(runner.invoke("Quick", {"sleep": 0.5}).result["pid"]))
        for _ in range(2)
    ]
    for call in calls:
        call.start()
    for call in calls:
        call.join()
    # Then each had a worker of its own
    assert len(set(pids)) == 2


def test_a_worker_ignores_powertools_no_metrics_warning_and_shows_the_others(runner: FunctionRunner) -> None:
    # When a function flushes Powertools' metrics with none of its own, then warns of something else
    shown = runner.invoke("Quick", {"warn": "a real warning"}).result_or_raise()
    # Then only the real warning shows: the empty flush's warning is noise on every cold start
    assert shown == ["a real warning"]


def test_an_unhandled_exception_is_reported_as_the_python_runtime_reports_it(runner: FunctionRunner) -> None:
    # When
    failed = runner.invoke("Quick", {"raise": "no such order"})
    # Then
    assert failed.error is not None
    assert set(failed.error) == {"errorMessage", "errorType", "stackTrace"}
    assert (failed.error["errorType"], failed.error["errorMessage"]) == ("Refused", "no such order")


def test_a_function_past_its_timeout_is_stopped_with_sandbox_timedout(runner: FunctionRunner) -> None:
    # When a function with a 1-second Timeout takes 3
    timed_out = runner.invoke("Short", {"sleep": 3})
    # Then the caller gets Lambda's payload at the timeout, and the worker is gone
    assert timed_out.error is not None
    assert set(timed_out.error) == {"errorType", "errorMessage"}
    assert timed_out.error["errorType"] == "Sandbox.Timedout"
    assert re.fullmatch(
        r"RequestId: [0-9a-f-]{36} Error: Task timed out after 1\.00 seconds", timed_out.error["errorMessage"]
    )
    assert timed_out.duration_ms < 1_900
    # And the next invocation starts a new worker
    assert runner.invoke("Short", {}).cold_start


def test_a_caller_that_gives_up_sooner_stops_the_function_there(runner: FunctionRunner) -> None:
    # When the caller waits half a second for a 5-second function (as API Gateway waits 30 s)
    gave_up = runner.invoke("Quick", {"sleep": 2}, timeout=0.5)
    # Then
    assert gave_up.error is not None
    assert gave_up.error["errorType"] == "Sandbox.Timedout"
    assert gave_up.duration_ms < 1_500


def test_a_worker_killed_mid_invocation_ends_it_with_runtime_exit_error(runner: FunctionRunner) -> None:
    # Given an invocation under way
    results = []
    call = threading.Thread(target=lambda: results.append(runner.invoke("Quick", {"sleep": 3})))
    call.start()
    while not runner.kill_running("Quick"):
        pass
    call.join()
    # Then
    [killed] = results
    assert killed.error is not None
    assert killed.error["errorType"] == "Runtime.ExitError"


def test_a_result_over_six_megabytes_is_refused_as_lambda_refuses_it(runner: FunctionRunner) -> None:
    # When
    too_large = runner.invoke("Quick", {"bytes": MAX_RESPONSE_BYTES})
    fits = runner.invoke("Quick", {"bytes": MAX_RESPONSE_BYTES - 10})
    # Then
    assert too_large.error is not None
    assert too_large.error["errorType"] == "Function.ResponseSizeTooLarge"
    assert fits.succeeded


def test_each_invocation_reports_its_own_peak_memory(runner: FunctionRunner) -> None:
    # When one invocation allocates 200 MB and the next one nothing, in the same worker
    runner.invoke("Quick", {})
    big = runner.invoke("Quick", {"allocate_mb": 200})
    small = runner.invoke("Quick", {})
    # Then the first peak shows the 200 MB, and the next is measured afresh
    assert big.peak_memory_mb is not None
    assert small.peak_memory_mb is not None
    assert big.peak_memory_mb - small.peak_memory_mb > 150


def test_an_environment_set_for_a_block_reaches_functions_started_in_it_only(runner: FunctionRunner) -> None:
    # When
    with runner.environment(LIMIT="10"):
        inside = runner.invoke("Quick", {}).result_or_raise()["environment"]
    after = runner.invoke("Quick", {}).result_or_raise()["environment"]
    # Then
    assert inside["LIMIT"] == "10"
    assert "LIMIT" not in after


def test_past_the_warm_limit_the_worker_idle_longest_is_stopped() -> None:
    # Given a runner that keeps one warm worker
    runner = FunctionRunner(SPECS, ENVIRONMENTS.__getitem__, max_idle=1)
    try:
        runner.invoke("Quick", {})
        # When another function runs
        runner.invoke("Short", {})
        # Then the first one's next invocation is a cold start, the second's is warm
        assert runner.invoke("Quick", {}).cold_start
        assert runner.invoke("Quick", {}).cold_start is False
    finally:
        runner.stop()


def test_an_invocation_past_the_reserved_concurrency_is_throttled_without_running(tmp_path: Path) -> None:
    # Given a function with a reserved concurrency of 1, one invocation of it running
    reserved = FunctionRunner(
        {"Quick": SPECS["Quick"]}, ENVIRONMENTS.__getitem__, {"Quick": "local-Quick"}, reserved={"Quick": 1}
    )
    started, release = tmp_path / "started", tmp_path / "release"
    running: list[object] = []
    first = threading.Thread(
        target=lambda: running.append(
            reserved.invoke("Quick", {"started": str(started), "release": str(release)})
        )
    )
    try:
        first.start()
        while not started.exists():
            first.join(0.01)
        # When a second invocation arrives
        second = reserved.invoke("Quick", {})
        # Then Lambda refuses it (429 TooManyRequestsException) and it runs nowhere
        assert second.throttled
        assert second.error == {
            "errorType": "TooManyRequestsException",
            "errorMessage": "Rate Exceeded.",
            "Reason": "ReservedFunctionConcurrentInvocationLimitExceeded",
        }
        assert second.result is None
    finally:
        release.touch()
        first.join()
    # And once the first is done, the next one runs
    assert reserved.invoke("Quick", {}).succeeded
    reserved.stop()


def test_a_reserved_functions_warm_workers_are_the_last_stopped_when_too_many_are_idle() -> None:
    # Given a pool that keeps one idle worker, and a function reserving one
    pool = FunctionRunner(
        SPECS,
        ENVIRONMENTS.__getitem__,
        {"Quick": "local-Quick", "Short": "local-Short"},
        max_idle=1,
        reserved={"Quick": 1},
    )
    try:
        warm = pool.invoke("Quick", {}).result_or_raise()["pid"]
        # When another function runs after it (a flood of another function would)
        pool.invoke("Short", {})
        # Then the reserved function's worker is still warm: the other's was stopped instead
        again = pool.invoke("Quick", {})
        assert not again.cold_start
        assert again.result["pid"] == warm
        assert pool.invoke("Short", {}).cold_start
    finally:
        pool.stop()
