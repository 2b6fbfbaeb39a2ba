"""The sandbox's whole mutable state behind one lock: world, clock, usage, faults and request log."""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from platform_sandbox.config import SandboxConfig
from platform_sandbox.faults import FaultQueue
from platform_sandbox.scenarios import build_world
from platform_sandbox.usage import UsageMeter
from platform_sandbox.world import World


class AdjustableClock:
    """Wall-clock time plus an offset the admin API can advance (token expiry, replace timeouts)."""

    def __init__(self, source: Callable[[], float] = time.time) -> None:
        self._source = source
        self._offset = 0.0

    def now(self) -> float:
        return self._source() + self._offset

    def advance(self, seconds: float) -> None:
        self._offset += seconds


class SandboxState:
    """Everything one sandbox instance remembers. Hold ``lock`` while reading or changing it."""

    def __init__(self, config: SandboxConfig, clock: AdjustableClock | None = None) -> None:
        self.config = config
        self.clock = clock or AdjustableClock()
        # Re-entrant: admin helpers that take the lock may be called from Graph handlers too.
        self.lock = threading.RLock()
        self.faults = FaultQueue()
        self.load_scenario(config.scenario)

    def load_scenario(self, name: str) -> None:
        """Replace the world with scenario ``name`` and forget usage, faults and the request log.

        Raises ``KeyError`` for an unknown scenario name.
        """
        self.world: World = build_world(name, self.config)
        self.scenario = name
        self.usage = UsageMeter(self.config.quotas, self.config.app_calls_per_hour)
        self.faults.clear()
        self.requests: deque[dict[str, Any]] = deque(maxlen=self.config.request_log_size)
        self._request_ids = 0

    def log_request(self, entry: dict[str, Any]) -> None:
        """Append one request to the log (callers strip secrets first), numbering it."""
        self._request_ids += 1
        self.requests.append({"seq": self._request_ids, **entry})
