"""Logger, Tracer and Metrics shared by every function (Powertools).

The Powertools ``Tracer`` imports the X-Ray SDK when it is built (about 140 ms of a cold start), even
with tracing disabled. It is built only when tracing is on: in Lambda (``AWS_LAMBDA_FUNCTION_NAME``),
not under ``sam local`` and without ``POWERTOOLS_TRACE_DISABLED`` (the rule Powertools itself
applies). Otherwise ``tracer`` is :class:`NoTracer`, whose decorators return the function as it is.
With SnapStart (predict) the import happens before the snapshot, so tracing costs a restore nothing.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, TypeVar

from aws_lambda_powertools import Logger, Metrics

F = TypeVar("F", bound=Callable[..., Any])

_TRUE = {"1", "true", "yes", "on", "y", "t"}


def tracing_enabled(environ: dict[str, str] | None = None) -> bool:
    """Whether traces are sent: in Lambda, not under ``sam local``, not disabled by the env."""
    env = os.environ if environ is None else environ
    if env.get("POWERTOOLS_TRACE_DISABLED", "").strip().lower() in _TRUE:
        return False
    return bool(env.get("AWS_LAMBDA_FUNCTION_NAME")) and not env.get("AWS_SAM_LOCAL")


class NoTracer:
    """The Tracer's decorators, doing nothing (tracing off: the X-Ray SDK is never imported)."""

    def capture_method(self, method: F) -> F:
        return method

    def capture_lambda_handler(self, handler: F) -> F:
        return handler


def _tracer() -> Any:
    if not tracing_enabled():
        return NoTracer()
    from aws_lambda_powertools import Tracer

    return Tracer()


# Service name and namespace come from POWERTOOLS_SERVICE_NAME / POWERTOOLS_METRICS_NAMESPACE,
# set in template.yaml Globals.
logger = Logger()
tracer = _tracer()
metrics = Metrics()
