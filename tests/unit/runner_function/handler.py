"""A function for the local runner's tests: what it does is what its event asks."""

import os
import time
import warnings
from typing import Any


class Refused(Exception):
    pass


def lambda_handler(event: dict[str, Any], context: Any) -> Any:
    if "started" in event:  # tell the test it runs, then hold on until it says so
        with open(event["started"], "w"):
            pass
        while not os.path.exists(event["release"]):
            time.sleep(0.01)
    if "sleep" in event:
        time.sleep(event["sleep"])
    if "raise" in event:
        raise Refused(event["raise"])
    if "allocate_mb" in event:
        block = bytearray(event["allocate_mb"] * 1024 * 1024)
        block[::4096] = b"x" * len(block[::4096])  # touch every page: resident, not only reserved
    if "warn" in event:  # the warnings shown: Powertools' flush without metrics, then the event's own
        with warnings.catch_warnings(record=True) as shown:
            from aws_lambda_powertools import Metrics

            Metrics(namespace="RunnerTest").flush_metrics()
            warnings.warn(event["warn"], UserWarning, stacklevel=1)
        return [str(warning.message) for warning in shown]
    if "bytes" in event:
        return "x" * event["bytes"]
    return {
        "pid": os.getpid(),
        "environment": dict(os.environ),
        "remaining_ms": context.get_remaining_time_in_millis(),
        "function_name": context.function_name,
        "memory_limit_in_mb": context.memory_limit_in_mb,
        "request_id": context.aws_request_id,
    }
