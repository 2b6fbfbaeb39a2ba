"""Running the payments sandbox over real HTTP, with its webhook dispatcher, in background threads."""

from __future__ import annotations

import logging
import threading
from types import TracebackType

import httpx
from werkzeug.serving import BaseWSGIServer, WSGIRequestHandler, make_server

from payments_sandbox import events, lifecycle
from payments_sandbox.app import create_app
from payments_sandbox.config import PaymentsSandboxConfig
from payments_sandbox.state import AdjustableClock, PaymentsSandboxState

logger = logging.getLogger("payments_sandbox")
# The longest the dispatcher sleeps: expiry by the timer is noticed within this.
IDLE_SECONDS = 1.0


class QuietRequestHandler(WSGIRequestHandler):
    """Logs method, path and status only."""

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        logger.info("%s %s %s", self.command, self.path.split("?", 1)[0], code)


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


class PaymentsSandboxServer:
    """The payments sandbox on a local port.

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
        self.host = host
        self.state = PaymentsSandboxState(self.config, clock)
        self.app = create_app(self.state)
        self._server: BaseWSGIServer | None = None
        self._thread: threading.Thread | None = None
        self._dispatcher: Dispatcher | None = None

    def start(self, port: int = 0) -> None:
        """Serve in a daemon thread on ``host:port`` (0 = any free port). Returns once listening."""
        if self._server is not None:
            raise RuntimeError("the payments sandbox is already running")
        self._server = make_server(
            self.host, port, self.app, threaded=True, request_handler=QuietRequestHandler
        )
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="payments-sandbox", daemon=True
        )
        self._thread.start()
        self._dispatcher = Dispatcher(self.state)
        self._dispatcher.start()

    @property
    def url(self) -> str:
        """``http://host:port`` of the running server."""
        if self._server is None:
            raise RuntimeError("the payments sandbox is not running; call start() first")
        return f"http://{self.host}:{self._server.server_port}"

    def stop(self) -> None:
        """Stop serving and delivering, and free the port; safe to call twice."""
        if self._dispatcher is not None:
            self._dispatcher.stop()
            self._dispatcher = None
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join()
        self._server, self._thread = None, None

    def __enter__(self) -> PaymentsSandboxServer:
        if self._server is None:
            self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.stop()
