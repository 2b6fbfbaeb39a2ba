"""The time an invocation has left, which every outbound call is bounded by.

Lambda stops a function at its ``Timeout``, and API Gateway's HTTP API gives up on it at 30 s and
answers the caller a 503 without a body. A client setting (a 30 s read timeout, five retries, a
60 s pause on high usage) knows nothing of that: one slow call would outlive the function. So every
entry point opens the invocation's budget from its Lambda context (:func:`bounded`, and
``shared.api.http_entry_point`` for the HTTP functions), and the platform client and the AWS clients
ask :func:`call_timeout` before each attempt, retry or pause: a call never waits past the time the
function has left less a reserve, kept to answer (a 503 with a body and a ``Retry-After``, or a
recorded failure) before Lambda stops it: :data:`PLATFORM_RESERVE_SECONDS` after a platform call,
room for the AWS calls that record or undo, and :data:`RESERVE_SECONDS` after an AWS call.

Only the Lambda context's interface is used (``get_remaining_time_in_millis``), read afresh each
time. It is kept in a context variable: the local stack runs several invocations at once on
threads of one process, and each must see its own. A thread a request starts for its own calls
copies it with :func:`carry`. Outside an invocation (a tool, a benchmark) nothing is bounded.
"""

from __future__ import annotations

import contextvars
import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Protocol

# Kept back from every AWS call: the function's own answer after its last one.
RESERVE_SECONDS = 1.0
# Kept back from every platform call: the AWS calls that record its outcome or undo what the
# request began (an idempotency record, a stored list) after the last one, then the answer.
PLATFORM_RESERVE_SECONDS = 3.0


class RemainingTime(Protocol):
    """The slice of the Lambda context this module reads."""

    def get_remaining_time_in_millis(self) -> int: ...


_CONTEXT: contextvars.ContextVar[RemainingTime | None] = contextvars.ContextVar(
    "lambda_context", default=None
)


def seconds_left() -> float | None:
    """Seconds until the current invocation is stopped, or None outside an invocation."""
    context = _CONTEXT.get()
    return None if context is None else context.get_remaining_time_in_millis() / 1000


def call_timeout(ceiling: float, *, reserve: float = RESERVE_SECONDS) -> float:
    """The longest the next outbound call (or wait) may take: ``ceiling``, or less when the
    invocation has less left after ``reserve`` (0 when nothing is left)."""
    left = seconds_left()
    if left is None:
        return ceiling
    return max(0.0, min(ceiling, left - reserve))


@contextmanager
def invocation(context: RemainingTime) -> Iterator[None]:
    """Bound the outbound calls made inside the block by ``context``'s remaining time."""
    token = _CONTEXT.set(context)
    try:
        yield
    finally:
        _CONTEXT.reset(token)


def bounded[E, C: RemainingTime, R](handler: Callable[[E, C], R]) -> Callable[[E, C], R]:
    """A Lambda handler ``(event, context)`` whose outbound calls are bounded by ``context``."""

    @functools.wraps(handler)
    def run(event: E, context: C) -> R:
        with invocation(context):
            return handler(event, context)

    return run


def carry[**P, R](function: Callable[P, R]) -> Callable[P, R]:
    """``function`` to be run on another thread within this invocation's budget (a thread pool
    does not carry context variables over by itself)."""
    context = _CONTEXT.get()
    if context is None:
        return function

    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        with invocation(context):
            return function(*args, **kwargs)

    return run
