"""The fault queue: injected misbehaviour that fires on matching API calls a set number of times.

What a fault does is each sandbox's own (its ``FaultSpec``); which call it fires on, and how often,
is the same in both and is decided here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Protocol


class FaultSpecLike(Protocol):
    """What the queue reads of a sandbox's ``FaultSpec`` (a pydantic model)."""

    @property
    def method(self) -> str | None: ...  # None: any method

    @property
    def path(self) -> str: ...  # a regex searched in the request path

    @property
    def count(self) -> int: ...  # how many matching calls it fires on

    @property
    def after(self) -> int: ...  # matching calls to let through before it fires

    def model_dump(self, *, exclude_none: bool = ...) -> dict[str, Any]: ...


@dataclass
class Fault[S: FaultSpecLike]:
    fault_id: int
    spec: S
    remaining: int
    passed: int = 0

    def matches(self, method: str, path: str) -> bool:
        if self.spec.method is not None and self.spec.method.upper() != method.upper():
            return False
        return re.search(self.spec.path, path) is not None

    def describe(self) -> dict[str, Any]:
        return {"id": self.fault_id, "remaining": self.remaining, **self.spec.model_dump(exclude_none=True)}


class FaultQueue[S: FaultSpecLike]:
    """Faults in the order they were added; the first match fires and loses one use."""

    def __init__(self) -> None:
        self._faults: list[Fault[S]] = []
        self._next_id = 1

    def add(self, spec: S) -> Fault[S]:
        fault = Fault(self._next_id, spec, spec.count)
        self._next_id += 1
        self._faults.append(fault)
        return fault

    def take(self, method: str, path: str) -> S | None:
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
