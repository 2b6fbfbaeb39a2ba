"""Child process of ``benchmarks.activation``: the activation state machine's Lambda function, kept
warm as one Lambda container is, running one task at a time and reporting each task's peak memory.

Reads one event per line on stdin; answers one line ``@@ {"result" | "errorType", "peak_mb", ...}``
on stdout (everything else on stdout is the function's own logs). Before each task the process's
peak resident set (VmHWM) is reset through ``/proc/self/clear_refs``, so ``peak_mb`` is that task's
peak, imports and all, which is what Lambda reports as "Max Memory Used". ``seconds`` is the task's
wall time and ``cpu_seconds`` its process CPU time (the machine is shared: wall time includes waiting
for a core)."""

from __future__ import annotations

import importlib.util
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT_SECONDS = 300  # the template's Timeout for ActivationStepFunction


class Context:
    function_name = "ActivationStepFunction"
    function_version = "$LATEST"
    invoked_function_arn = "arn:aws:lambda:eu-west-1:123456789012:function:ActivationStepFunction"
    memory_limit_in_mb = 1024
    aws_request_id = "bench"
    log_group_name = "/aws/lambda/local"
    log_stream_name = "local"

    def __init__(self) -> None:
        self._deadline = time.monotonic() + TIMEOUT_SECONDS

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._deadline - time.monotonic()) * 1000))


def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def _reset_peak() -> None:
    Path("/proc/self/clear_refs").write_text("5")


def main() -> None:
    path = ROOT / "functions" / "activation_step" / "handler.py"
    spec = importlib.util.spec_from_file_location("activation_step_handler", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for line in sys.stdin:
        event = json.loads(line)
        _reset_peak()
        started, cpu_started = time.perf_counter(), time.process_time()
        answer: dict[str, Any]
        try:
            answer = {"result": module.lambda_handler(event, Context())}
        except Exception as exc:  # what the runtime reports for an unhandled error
            answer = {"errorType": type(exc).__name__, "errorMessage": str(exc)}
        answer |= {
            "peak_mb": _status_kib("VmHWM") / 1024,
            "seconds": time.perf_counter() - started,
            "cpu_seconds": time.process_time() - cpu_started,
        }
        print("@@ " + json.dumps(answer, default=str), flush=True)


if __name__ == "__main__":
    main()
