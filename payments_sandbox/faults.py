"""Fault injection: queued misbehaviour that fires on matching API calls a set number of times."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from payments_sandbox import errors


class FaultKind(StrEnum):
    # Refused before the endpoint runs, so nothing is saved under the idempotency key: 429 rate_limit.
    RATE_LIMIT = "rate_limit"
    # Refused before the endpoint runs: HTTP 500 api_error (or `http_status`), safe to retry.
    UNAVAILABLE = "unavailable"
    # Any envelope before the endpoint runs: `http_status`, `type`, `code`, `message`, `param`.
    ERROR = "error"
    # The endpoint runs and its answer is saved under the key, then the caller gets a 500 instead:
    # the lost answer a retry with the same key must resolve without doing the work twice.
    LOST_ANSWER = "lost_answer"
    # Answer normally after `seconds` (an idempotency key is "in use" meanwhile).
    DELAY = "delay"


class FaultSpec(BaseModel):
    """What ``POST /_admin/faults`` accepts. ``path`` is a regex searched in the request path."""

    model_config = ConfigDict(extra="forbid")

    kind: FaultKind
    method: str | None = None
    path: str = ".*"
    count: int = Field(default=1, ge=1)
    # Matching calls to let through before the fault fires.
    after: int = Field(default=0, ge=0)
    http_status: int | None = Field(default=None, ge=400, le=599)
    type: str = "api_error"
    code: str | None = None
    message: str | None = None
    param: str | None = None
    # Sets `Stripe-Should-Retry: true|false` on the answer, which the SDK obeys before anything else.
    should_retry: bool | None = None
    seconds: float = Field(default=0.0, ge=0, le=60)

    @field_validator("path")
    @classmethod
    def _compiles(cls, value: str) -> str:
        re.compile(value)
        return value

    def error(self) -> errors.PaymentsError:
        """The error this fault answers with."""
        if self.kind is FaultKind.RATE_LIMIT:
            error = errors.rate_limited()
        elif self.kind is FaultKind.ERROR:
            error = errors.PaymentsError(
                self.http_status or 400,
                self.type,
                self.message or "Injected error",
                code=self.code,
                param=self.param,
            )
        else:
            error = errors.api_error(self.message, self.http_status or 500)
        if self.should_retry is not None:
            error.headers["Stripe-Should-Retry"] = "true" if self.should_retry else "false"
        return error


@dataclass
class Fault:
    fault_id: int
    spec: FaultSpec
    remaining: int
    passed: int = 0

    def matches(self, method: str, path: str) -> bool:
        if self.spec.method is not None and self.spec.method.upper() != method.upper():
            return False
        return re.search(self.spec.path, path) is not None

    def describe(self) -> dict[str, Any]:
        return {"id": self.fault_id, "remaining": self.remaining, **self.spec.model_dump(exclude_none=True)}


class FaultQueue:
    """Faults in the order they were added; the first match fires and loses one use."""

    def __init__(self) -> None:
        self._faults: list[Fault] = []
        self._next_id = 1

    def add(self, spec: FaultSpec) -> Fault:
        fault = Fault(self._next_id, spec, spec.count)
        self._next_id += 1
        self._faults.append(fault)
        return fault

    def take(self, method: str, path: str) -> FaultSpec | None:
        """The spec of the first fault matching this call, consuming one of its uses; else None."""
        for fault in self._faults:
            if fault.matches(method, path):
                if fault.passed < fault.spec.after:
                    fault.passed += 1
                    continue
                fault.remaining -= 1
                if fault.remaining == 0:
                    self._faults.remove(fault)
                return fault.spec
        return None

    def clear(self) -> None:
        self._faults.clear()

    def describe(self) -> list[dict[str, Any]]:
        return [fault.describe() for fault in self._faults]
