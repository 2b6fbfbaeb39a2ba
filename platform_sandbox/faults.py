"""Fault injection: queued misbehaviour that fires on matching Graph calls a set number of times."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator


class FaultKind(StrEnum):
    THROTTLE = "throttle"  # a throttling error with usage headers (docs/platform-notes.md §8.2)
    TRANSIENT = "transient"  # HTTP 500, code 2, is_transient true
    DELAY = "delay"  # answer normally after `seconds`
    EXPIRE_TOKEN = "expire_token"  # the caller's token expires now: 190/463 from this call on
    REVOKE_TOKEN = "revoke_token"  # the caller's token is revoked: 190/`subcode` (458, 460, 467)
    ERROR = "error"  # any envelope: `code`, `subcode`, `message`, `http_status`
    # The call runs, then its answer is lost to an error (default HTTP 500, code 2, transient): the
    # ambiguous case a client must resolve by looking before it creates again.
    LOST_ANSWER = "lost_answer"


class FaultSpec(BaseModel):
    """What ``POST /_admin/faults`` accepts. ``path`` is a regex searched in the unversioned path."""

    model_config = ConfigDict(extra="forbid")

    kind: FaultKind
    method: str | None = None
    path: str = ".*"
    count: int = Field(default=1, ge=1)
    # Matching calls to let through before the fault fires (e.g. revoke the token after 2 batches).
    after: int = Field(default=0, ge=0)
    code: int | None = None
    subcode: int | None = None
    message: str | None = None
    http_status: int = 400
    regain_minutes: int = Field(default=1, ge=0)
    seconds: float = Field(default=0.0, ge=0, le=60)

    @field_validator("path")
    @classmethod
    def _compiles(cls, value: str) -> str:
        re.compile(value)
        return value


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
