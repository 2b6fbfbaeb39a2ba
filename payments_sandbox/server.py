"""Running the payments sandbox over real HTTP, with its webhook dispatcher, in background threads."""

from __future__ import annotations

import logging
import threading

import httpx

from payments_sandbox import events, lifecycle
from payments_sandbox.app import create_app
from payments_sandbox.config import PaymentsSandboxConfig
from payments_sandbox.state import PaymentsSandboxState
from sandbox_kit.clock import AdjustableClock
from sandbox_kit.server import LocalServer

logger = logging.getLogger("payments_sandbox")
# The longest the dispatcher sleeps: expiry by the timer is noticed within this.
IDLE_SECONDS = 1.0


class Dispatcher:
    """Expires sessions when their time comes and sends webhook deliveries when they fall due."""

    def __init__(self, state: PaymentsSandboxState) -> None:
        self.state = state
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="payments-sandbox-webhooks", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self.state.wakeup.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                with self.state.lock:
                    lifecycle.sweep(self.state)
                events.deliver_due(self.state)
                with self.state.lock:
                    due = events.next_due(self.state)
                    wait = (
                        IDLE_SECONDS if due is None else min(IDLE_SECONDS, max(due - self.state.now(), 0.0))
                    )
            except httpx.HTTPError:  # a broken client setup; the next round tries again
                logger.exception("webhook delivery round failed")
                wait = IDLE_SECONDS
            if wait > 0:
                self.state.wakeup.wait(wait)
            self.state.wakeup.clear()


class PaymentsSandboxServer(LocalServer):
    """The payments sandbox on a local port, with its webhook dispatcher.

    ``start(port=0)`` picks a free port; ``url`` is then the API base (``/v1/...``), the hosted pages'
    base and the admin API's (``/_admin``). ``state`` is the live state for in-process inspection.
    """

    def __init__(
        self,
        config: PaymentsSandboxConfig | None = None,
        *,
        host: str = "127.0.0.1",
        clock: AdjustableClock | None = None,
    ) -> None:
        self.config = config or PaymentsSandboxConfig()
        self.state = PaymentsSandboxState(self.config, clock)
        self.app = create_app(self.state)
        super().__init__(
            self.app, host=host, name="payments sandbox", thread_name="payments-sandbox", logger=logger
        )
        self._dispatcher: Dispatcher | None = None

    def start(self, port: int = 0) -> None:
        """Serve in a daemon thread on ``host:port`` (0 = any free port) and start delivering webhooks.
        Returns once listening."""
        super().start(port)
        self._dispatcher = Dispatcher(self.state)
        self._dispatcher.start()

    def stop(self) -> None:
        """Stop serving and delivering, and free the port; safe to call twice."""
        if self._dispatcher is not None:
            self._dispatcher.stop()
            self._dispatcher = None
        super().stop()
