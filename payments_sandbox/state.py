"""The payments sandbox's whole mutable state behind one lock: world, clock, idempotency, faults,
request log, and the signal that wakes the webhook dispatcher."""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

import httpx

from payments_sandbox.config import PaymentsSandboxConfig
from payments_sandbox.faults import FaultQueue
from payments_sandbox.idempotency import IdempotencyStore
from payments_sandbox.world import World


class AdjustableClock:
    """Wall-clock time plus an offset the admin API can advance (session expiry, link expiry, retries)."""

    def __init__(self, source: Callable[[], float] = time.time) -> None:
        self._source = source
        self._offset = 0.0

    def now(self) -> float:
        return self._source() + self._offset

    def advance(self, seconds: float) -> None:
        self._offset += seconds


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
        self.faults = FaultQueue()
        self.reset()

    def reset(self) -> None:
        """Forget every account, session, endpoint, event, key, fault and logged request."""
        self.world = World()
        self.idempotency = IdempotencyStore(self.config.idempotency_seconds)
        self.faults.clear()
        self.requests: deque[dict[str, Any]] = deque(maxlen=self.config.request_log_size)
        self._request_seq = 0

    def now(self) -> float:
        return self.clock.now()

    def log_request(self, entry: dict[str, Any]) -> None:
        """Append one request to the log, numbering it."""
        self._request_seq += 1
        self.requests.append({"seq": self._request_seq, **entry})
