"""The payments sandbox's whole mutable state behind one lock: world, clock, idempotency, faults,
request log, and the signal that wakes the webhook dispatcher."""

from __future__ import annotations

import threading

import httpx

from payments_sandbox.config import PaymentsSandboxConfig
from payments_sandbox.faults import FaultSpec
from payments_sandbox.idempotency import IdempotencyStore
from payments_sandbox.world import World
from sandbox_kit.clock import AdjustableClock
from sandbox_kit.faults import FaultQueue
from sandbox_kit.request_log import RequestLog


class PaymentsSandboxState:
    """Everything one payments sandbox remembers. Hold ``lock`` while reading or changing it.

    ``transport`` (an httpx transport) carries webhook deliveries; None means the network.
    """

    def __init__(
        self,
        config: PaymentsSandboxConfig,
        clock: AdjustableClock | None = None,
        *,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.config = config
        self.clock = clock or AdjustableClock()
        self.transport = transport
        # Re-entrant: admin helpers that take the lock may be called from API handlers too.
        self.lock = threading.RLock()
        # Set when a delivery may have become due (new event, clock moved): the dispatcher wakes.
        self.wakeup = threading.Event()
        self.faults: FaultQueue[FaultSpec] = FaultQueue()
        self.reset()

    def reset(self) -> None:
        """Forget every account, session, endpoint, event, key, fault and logged request."""
        self.world = World()
        self.idempotency = IdempotencyStore(self.config.idempotency_seconds)
        self.faults.clear()
        self.requests = RequestLog(self.config.request_log_size)

    def now(self) -> float:
        return self.clock.now()
