"""Benchmark: a 1M-user prospecting activation end to end through the state machine and the sandbox.

Starts a ``LocalStack`` (moto server executing the template's state machine, the platform sandbox,
the local API gateway), connects a new organization through the sandbox's OAuth dialog, uploads a
1,000,000-user CSV through the presigned link (``POST /platform-ads/uploads``), then times
``POST /platform-ads/activations`` (prospecting, a 1 % GB lookalike) until
``GET /platform-ads/activations/{id}`` says it succeeded.

The activation's Lambda tasks run in one child process kept warm (``benchmarks._activation_worker``),
as one Lambda container is, so each task's peak memory is its own: the process's peak resident set,
reset before every task. Upload calls are counted in the sandbox's request log. Run
``python -m benchmarks activation``.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
import warnings
from collections import defaultdict
from contextlib import ExitStack, redirect_stdout
from typing import Any

import httpx

from benchmarks._rows import BenchRow, bench_row
from local.connected import connected_org
from local.runner import Invocation, error_payload
from local.stack import LocalStack
from local.statemachine import dispatch_lambda_tasks
from local.template import functions, load_template
from local.uploads import send_upload
from shared.observability import logger

SIZE = 1_000_000
TARGET_SECONDS = 90.0
TARGET_UPLOAD_CALLS = 100
TARGET_PEAK_MB = 300.0
STEP_FUNCTION = "ActivationStepFunction"
# How often the status is read: as often as the dashboard's progress bar reads it (dashboard/wizard.js
# ``follow``). Every read runs in the local stack's process, beside the sandbox and moto.
POLL_SECONDS = 0.7


class StepWorker:
    """The activation step function in a warm child process; remembers each task's peak memory."""

    def __init__(self) -> None:
        self.peaks: dict[str, float] = defaultdict(float)
        self.seconds: dict[str, float] = defaultdict(float)
        self.cpu_seconds: dict[str, float] = defaultdict(float)
        self.tasks = 0
        self._process = subprocess.Popen(
            [sys.executable, "-m", "benchmarks._activation_worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env={
                **os.environ,
                "POWERTOOLS_LOG_LEVEL": "WARNING",
                "POWERTOOLS_METRICS_DISABLED": "true",
                # What Lambda sets: the engine takes half of it (shared.dataplane.engine).
                "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(
                    load_template()["Resources"][STEP_FUNCTION]["Properties"]["MemorySize"]
                ),
            },
        )

    def invoke(self, event: dict[str, Any]) -> Any:
        assert self._process.stdin is not None
        assert self._process.stdout is not None
        self._process.stdin.write(json.dumps(event) + "\n")
        self._process.stdin.flush()
        for line in self._process.stdout:
            if line.startswith("@@ "):
                answer = json.loads(line[3:])
                break
        else:
            raise RuntimeError("the step worker exited")
        action = event.get("action", "?")
        self.peaks[action] = max(self.peaks[action], answer["peak_mb"])
        self.seconds[action] += answer["seconds"]
        self.cpu_seconds[action] += answer["cpu_seconds"]
        self.tasks += 1
        if "errorType" in answer:
            raise type(answer["errorType"], (Exception,), {})(answer["errorMessage"])
        return answer["result"]

    def close(self) -> None:
        if self._process.stdin is not None:
            self._process.stdin.close()
        self._process.wait(timeout=30)


def users_csv(size: int) -> bytes:
    """``size`` distinct users as the upload CSV, all in GB (the lookalike's country)."""
    out = io.StringIO()
    out.write("user_id,email,firstName,lastName,phone,score,country\n")
    for i in range(size):
        out.write(f"u{i},shopper{i}@example.com,Ana,Silva,+4477{i:08d},0.5,GB\n")
    return out.getvalue().encode()


def _route_steps_to(stack: LocalStack, worker: StepWorker) -> None:
    runner = stack.runner
    assert runner is not None, "the stack is started"

    def invoke(function: str, event: dict[str, Any]) -> Invocation:
        if function != STEP_FUNCTION:
            return runner.invoke(function, event)
        started = time.monotonic()
        try:
            result = worker.invoke(event)
        except Exception as exc:
            return Invocation(
                function, "bench", False, (time.monotonic() - started) * 1000, None, error=error_payload(exc)
            )
        return Invocation(function, "bench", False, (time.monotonic() - started) * 1000, None, result=result)

    specs = functions(load_template())
    dispatch_lambda_tasks(
        invoke, {stack.physical[name].ref: name for name in specs if name in stack.physical}
    )


def _measure(stack: LocalStack, size: int) -> list[BenchRow]:
    worker = StepWorker()
    try:
        _route_steps_to(stack, worker)
        with (
            httpx.Client(base_url=stack.api_url, timeout=120) as api,
            httpx.Client(base_url=f"{stack.sandbox.url}/_admin", timeout=120) as admin,
        ):
            org = connected_org(stack, api)
            link = api.post("/platform-ads/uploads", headers=org.headers).json()
            send_upload(link, users_csv(size), timeout=300).raise_for_status()
            admin.delete("/requests")
            body = {
                "name": "Bench million",
                "uploadId": link["uploadId"],
                "objective": "prospecting",
                "lookalikeSize": 1,
                "lookalikeCountry": "GB",
            }
            started, stack_cpu_started = time.perf_counter(), time.process_time()
            accepted = api.post("/platform-ads/activations", json=body, headers=org.headers)
            accepted_after = time.perf_counter() - started
            if accepted.status_code != 202:
                raise RuntimeError(f"the activation answered {accepted.status_code}: {accepted.text[:300]}")
            audience_id = accepted.json()["audienceId"]
            status: dict[str, Any] = {}
            while time.perf_counter() - started < 900:
                status = api.get(f"/platform-ads/activations/{audience_id}", headers=org.headers).json()
                if status["state"] in ("succeeded", "failed"):
                    break
                time.sleep(POLL_SECONDS)
            elapsed = time.perf_counter() - started
            # This process runs moto, the sandbox and the gateway (the POST's own check included).
            stack_cpu = time.process_time() - stack_cpu_started
            if status.get("state") != "succeeded":
                raise RuntimeError(f"the activation ended {status.get('state')}: {status.get('error')}")
            calls = admin.get("/requests", params={"path": "/users$", "method": "POST"}).json()["requests"]
            upload_calls = sum(1 for call in calls if call["status"] == 200)
    finally:
        worker.close()
    largest_step, peak = max(worker.peaks.items(), key=lambda item: item[1])
    per_step = ", ".join(
        f"{step} {mb:.0f} MB / {worker.seconds[step]:.1f} s ({worker.cpu_seconds[step]:.1f} s CPU)"
        for step, mb in worker.peaks.items()
    )
    load = os.getloadavg()[0]
    uploaded = status["progress"]["usersUploaded"]
    return [
        bench_row(
            "1M-user prospecting activation, end to end (POST to succeeded)",
            elapsed,
            "s",
            target=f"<= {TARGET_SECONDS:.0f} s",
            passed=elapsed <= TARGET_SECONDS,
            notes=f"{uploaded:,} users uploaded in {status['progress']['batchesTotal']} batches; "
            f"{worker.tasks} tasks; POST answered 202 in {accepted_after:.1f} s; CPU: steps "
            f"{sum(worker.cpu_seconds.values()):.1f} s, local stack (moto, sandbox, gateway) "
            f"{stack_cpu:.1f} s; "
            f"load average {load:.1f} at the end",
        ),
        bench_row(
            "1M-user activation: upload calls",
            upload_calls,
            "calls",
            target=f"{TARGET_UPLOAD_CALLS}",
            passed=upload_calls == TARGET_UPLOAD_CALLS,
            notes="accepted POST /<audience>/users calls in the sandbox's request log",
        ),
        bench_row(
            "1M-user activation: largest step's peak memory",
            peak,
            "MB",
            target=f"<= {TARGET_PEAK_MB:.0f} MB",
            passed=peak <= TARGET_PEAK_MB,
            notes=f"{largest_step}; peak RSS per task in a warm worker (imports included): {per_step}",
        ),
    ]


def run(size: int = SIZE) -> list[BenchRow]:
    saved_environment = dict(os.environ)
    saved_level = logger.log_level
    logger.setLevel("WARNING")
    try:
        with ExitStack() as context:
            context.enter_context(redirect_stdout(sys.stderr))
            context.enter_context(warnings.catch_warnings(action="ignore", category=UserWarning))
            stack = context.enter_context(LocalStack())
            return _measure(stack, size)
    finally:
        logger.setLevel(saved_level)
        os.environ.clear()
        os.environ.update(saved_environment)


if __name__ == "__main__":
    for row in run(int(sys.argv[1]) if len(sys.argv) > 1 else SIZE):
        print(row)
