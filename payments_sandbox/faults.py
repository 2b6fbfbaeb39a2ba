"""Fault injection: the misbehaviour the provider's API can be made to show. ``sandbox_kit.faults`` queues
it and picks the calls it fires on."""

from __future__ import annotations

import re
from enum import StrEnum

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
