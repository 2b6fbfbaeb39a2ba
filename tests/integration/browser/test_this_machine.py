"""The browser tests' contexts (``keep_on_this_machine``): a page's request to this machine goes out
while the test waits for its effect outside Playwright (as a test waits for an event at the platform
sandbox), and a request that would leave the machine is refused."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Error

from tests.integration.browser.this_machine import keep_on_this_machine

pytestmark = pytest.mark.integration

# How long the test waits for a request that, held, would never come: a bound, not a measure.
WAIT_SECONDS = 20


class Server:
    """A server on this machine that serves an empty page and notes each POST it is sent."""

    def __init__(self) -> None:
        self.posted = threading.Event()
        posted = self.posted

        class Pages(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self._answer(b"<!doctype html><title>Page</title>")

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                posted.set()
                self._answer(b"")

            def _answer(self, body: bytes) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Pages)
        self.address = f"http://localhost:{self._server.server_port}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def server() -> Iterator[Server]:
    server = Server()
    yield server
    server.close()


@pytest.fixture
def kept(browser: Browser) -> Iterator[BrowserContext]:
    context = browser.new_context()
    keep_on_this_machine(context)
    yield context
    context.close()


def test_a_pages_request_to_this_machine_goes_out_while_the_test_waits_outside_playwright(
    kept: BrowserContext, server: Server
) -> None:
    # Given a page of this machine, in a context kept on it
    page = kept.new_page()
    page.goto(f"{server.address}/products/p1")
    # When the page sends a request of its own after the test's last Playwright call returned (as the
    # shop snippet's fetch: keepalive, text/plain, not awaited by the page)
    page.evaluate(
        """(url) => { setTimeout(() => fetch(url, {method: 'POST', keepalive: true,
             headers: {'Content-Type': 'text/plain'}, body: '{}'}), 500); }""",
        f"{server.address}/site-events",
    )
    # Then it reaches the server while the test's thread waits elsewhere (not inside Playwright)
    assert server.posted.wait(WAIT_SECONDS), "the page's request was held until the next Playwright call"


def test_a_pages_request_that_would_leave_the_machine_is_refused(
    kept: BrowserContext, server: Server
) -> None:
    # Given a page of this machine, in a context kept on it
    page = kept.new_page()
    page.goto(server.address)
    failures: dict[str, str | None] = {}
    page.on("requestfailed", lambda request: failures.update({request.url: request.failure}))
    # When it asks for addresses elsewhere (one whose name starts as this machine's does)
    elsewhere = ["https://www.example.com/", "http://localhost.example.com/", "http://10.0.0.1/"]
    for address in elsewhere:
        with pytest.raises(Error, match="Failed to fetch"):
            page.evaluate("(url) => fetch(url, {mode: 'no-cors'})", address)
    # Then the browser refused each itself (Chromium adds ".Inspector"): no network was tried
    assert sorted(failures) == sorted(elsewhere)
    assert all((failure or "").startswith("net::ERR_BLOCKED_BY_CLIENT") for failure in failures.values())
