"""A receiver that answers after the sandbox stopped waiting (a cold local worker: the process starts
and imports before it answers) is treated as the provider treats one that timed out
(docs/payments-notes.md §4.3): the attempt fails, the event stays pending and is delivered again,
the same event id, after the first retry delay. Never lost, possibly received twice (receivers
deduplicate on the event id)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from payments_sandbox import PaymentsSandboxConfig
from tests.unit.sandbox_payments.harness import Harness
from tests.unit.sandbox_payments.test_retries import completed_payment, delivery

DELAY = 300.0


@pytest.fixture
def sandbox() -> Harness:
    return Harness(PaymentsSandboxConfig(webhook_retry_delays=[DELAY]))


def test_an_answer_later_than_the_timeout_is_a_failed_attempt_delivered_again(sandbox: Harness) -> None:
    # Given a receiver whose first answer comes after the sandbox's timeout
    sandbox.answers.extend([httpx.ReadTimeout("timed out")])
    event_id = completed_payment(sandbox)

    # When the event is delivered, and again once the retry delay has passed
    sandbox.deliver()
    pending = delivery(sandbox, event_id)
    sandbox.advance(DELAY)
    retried = sandbox.deliver()

    # Then the first attempt failed without a status, the event stayed pending, and the retry took it
    assert (pending["state"], pending["attempts"][0]["status"], pending["attempts"][0]["error"]) == (
        "pending",
        None,
        "ReadTimeout",
    )
    assert retried == 1
    assert delivery(sandbox, event_id)["state"] == "succeeded"
    assert [json.loads(r.body)["id"] for r in sandbox.received] == [event_id, event_id]


class _ColdThenWarm(BaseHTTPRequestHandler):
    """Answers its first request only once ``release`` is set (a cold worker), the others at once."""

    release = threading.Event()
    received: list[str] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        first = not self.received
        self.received.append(json.loads(body)["id"])
        if first:
            self.release.wait(60)
        try:
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()
        except OSError:  # the sandbox hung up before the late answer
            pass

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def cold_receiver() -> Iterator[str]:
    _ColdThenWarm.release = threading.Event()
    _ColdThenWarm.received = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _ColdThenWarm)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/payments/webhook"
    finally:
        _ColdThenWarm.release.set()
        server.shutdown()
        server.server_close()


def test_a_cold_receiver_over_the_network_gets_the_event_again_after_the_retry_delay(
    cold_receiver: str,
) -> None:
    # Given the sandbox delivering over the network with a short timeout, to a receiver whose first
    # answer waits until the sandbox has given up (its timeout always passes first)
    sandbox = Harness(PaymentsSandboxConfig(webhook_retry_delays=[DELAY], webhook_timeout_seconds=5.0))
    sandbox.state.transport = None
    created = sandbox.call(
        "POST",
        "/v1/webhook_endpoints",
        {"url": cold_receiver, "enabled_events": ["checkout.session.completed"], "connect": True},
    )
    assert created.status_code == 200
    account = sandbox.account()
    session = sandbox.session(account)
    sandbox.admin("POST", f"/checkout/sessions/{session['id']}/pay", {})
    [event] = sandbox.events("checkout.session.completed")

    # When it is delivered (and the cold worker answers late), then again after the retry delay
    sandbox.deliver()
    _ColdThenWarm.release.set()
    first = delivery(sandbox, event["id"])
    sandbox.advance(DELAY - 1)
    early = sandbox.deliver()
    sandbox.advance(1)
    sandbox.deliver()

    # Then the first attempt timed out and kept the event pending; nothing was sent before the delay;
    # the retry delivered the same event, which the receiver got twice
    assert (first["state"], first["attempts"][0]["status"], first["attempts"][0]["error"]) == (
        "pending",
        None,
        "ReadTimeout",
    )
    assert early == 0
    assert delivery(sandbox, event["id"])["state"] == "succeeded"
    assert _ColdThenWarm.received == [event["id"], event["id"]]
