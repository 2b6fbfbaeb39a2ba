"""The sandbox's whole mutable state behind one lock: world, clock, usage, faults and request log."""

from __future__ import annotations

import threading

from platform_sandbox.config import SandboxConfig
from platform_sandbox.faults import FaultSpec
from platform_sandbox.scenarios import build_world
from platform_sandbox.usage import UsageMeter
from platform_sandbox.world import World
from sandbox_kit.clock import AdjustableClock
from sandbox_kit.faults import FaultQueue
from sandbox_kit.request_log import RequestLog


class SandboxState:
    """Everything one sandbox instance remembers. Hold ``lock`` while reading or changing it."""

    def __init__(self, config: SandboxConfig, clock: AdjustableClock | None = None) -> None:
        self.config = config
        self.clock = clock or AdjustableClock()
        # Re-entrant: admin helpers that take the lock may be called from Graph handlers too.
        self.lock = threading.RLock()
        self.faults: FaultQueue[FaultSpec] = FaultQueue()
        self.load_scenario(config.scenario)

    def load_scenario(self, name: str) -> None:
        """Replace the world with scenario ``name`` and forget usage, faults and the request log.

        Raises ``KeyError`` for an unknown scenario name.
        """
        self.world: World = build_world(name, self.config)
        self.scenario = name
        self.usage = UsageMeter(self.config.quotas, self.config.app_calls_per_hour)
        self.faults.clear()
        self.requests = RequestLog(self.config.request_log_size)
