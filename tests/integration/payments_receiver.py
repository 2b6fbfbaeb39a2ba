"""A webhook endpoint for tests: a local HTTP server that keeps every delivery's raw body and headers
and answers with the statuses a test queues (then 200)."""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType

from tests.integration.patience import BACKGROUND_JOB_SECONDS


@dataclass(frozen=True)
class Delivery:
    body: bytes
    signature: str


class WebhookReceiver:
    """``url`` takes POSTs; ``deliveries`` holds what arrived; ``answers`` the statuses to give."""

    def __init__(self) -> None:
        self.deliveries: list[Delivery] = []
        self.answers: deque[int] = deque()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                receiver.deliveries.append(Delivery(body, self.headers.get("Stripe-Signature", "")))
                self.send_response(receiver.answers.popleft() if receiver.answers else 200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: object) -> None:
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="webhook-receiver", daemon=True
        )
        self.url = f"http://127.0.0.1:{self._server.server_port}/payments/webhook"

    def wait_for(
        self, found: Callable[[list[Delivery]], bool], timeout: float = BACKGROUND_JOB_SECONDS
    ) -> list[Delivery]:
        """The deliveries once ``found`` holds for them; fails after ``timeout`` seconds (a delivery
        goes out from the sandbox's own thread, which a machine at load 20 may run seconds late).
        A delivery is kept before it is answered: what the sender recorded of the answer may lag."""
        deadline = time.monotonic() + timeout
        while not found(self.deliveries):
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"no matching delivery within {timeout} s: {len(self.deliveries)} arrived"
                )
            time.sleep(0.02)
        return list(self.deliveries)

    def __enter__(self) -> WebhookReceiver:
        self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
