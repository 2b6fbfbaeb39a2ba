"""The payments sandbox as a running server (docs/payments-notes.md §4.3, §8): started from the
command line with the platform's key, and its dispatcher retrying a failing endpoint and expiring
sessions on its own, over real HTTP."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import stripe

from payments_sandbox import PaymentsSandboxConfig, PaymentsSandboxServer
from tests.integration.payments_receiver import WebhookReceiver

pytestmark = pytest.mark.integration

REPO_ROOT = Path(__file__).resolve().parents[2]
KEY = "sk_test_commandline4242"


@pytest.fixture(scope="module")
def sandbox() -> Iterator[PaymentsSandboxServer]:
    # Retries a fifth of a second apart, so the dispatcher's schedule is seen in real time
    with PaymentsSandboxServer(PaymentsSandboxConfig(webhook_retry_delays=[0.2, 0.2])) as server:
        yield server


def connected(
    sandbox: PaymentsSandboxServer, receiver: WebhookReceiver
) -> tuple[stripe.StripeClient, str, str]:
    """An SDK client, an onboarded account and a connect endpoint's secret."""
    httpx.post(f"{sandbox.url}/_admin/reset").raise_for_status()
    client = stripe.StripeClient(sandbox.config.secret_key, base_addresses={"api": sandbox.url})
    endpoint = client.v1.webhook_endpoints.create(
        {"url": receiver.url, "enabled_events": ["checkout.session.expired"], "connect": True}
    )
    account = client.v1.accounts.create({"type": "express"}).id
    httpx.post(f"{sandbox.url}/_admin/accounts/{account}/onboard", json={}).raise_for_status()
    return client, account, endpoint.secret or ""


def mug_session(client: stripe.StripeClient, account: str) -> str:
    session = client.v1.checkout.sessions.create(
        {
            "mode": "payment",
            "line_items": [
                {
                    "price_data": {"currency": "eur", "unit_amount": 900, "product_data": {"name": "Mug"}},
                    "quantity": 1,
                }
            ],
        },
        options={"stripe_account": account},
    )
    return session.id


def test_the_command_line_prints_its_url_and_takes_the_key_it_was_given() -> None:
    # Given the sandbox started as `python -m payments_sandbox` with a key of our choosing
    process = subprocess.Popen(
        [sys.executable, "-m", "payments_sandbox", "--port", "0", "--secret-key", KEY],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=REPO_ROOT,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+", line)
        assert url is not None, line
        # When the SDK calls it with that key, and with another
        client = stripe.StripeClient(KEY, base_addresses={"api": url.group(0)})
        created = client.v1.accounts.create({"type": "express"})
        # Then the first is served and the second refused
        assert created.id.startswith("acct_")
        with pytest.raises(stripe.AuthenticationError):
            stripe.StripeClient("sk_test_other", base_addresses={"api": url.group(0)}).v1.accounts.retrieve(
                created.id
            )
    finally:
        process.terminate()
        process.wait(timeout=10)


def delivery_ended(sandbox: PaymentsSandboxServer, kind: str, seconds: float = 60) -> dict[str, Any]:
    """The sandbox's one event of ``kind`` once its first delivery has ended (succeeded or failed)."""
    deadline = time.monotonic() + seconds
    while True:
        [event] = httpx.get(f"{sandbox.url}/_admin/events", params={"type": kind}).json()["events"]
        if event["deliveries"][0]["state"] in {"succeeded", "failed"}:
            return dict(event)
        assert time.monotonic() < deadline, event
        time.sleep(0.05)


def test_a_failing_endpoint_gets_the_event_again_until_it_takes_it(sandbox: PaymentsSandboxServer) -> None:
    with WebhookReceiver() as receiver:
        client, account, secret = connected(sandbox, receiver)
        # Given an endpoint that fails twice
        receiver.answers.extend([500, 503])
        # When a session is expired
        session_id = mug_session(client, account)
        client.v1.checkout.sessions.expire(session_id, options={"stripe_account": account})
        # Then the same event arrives three times, the third taken, each validly signed
        deliveries = receiver.wait_for(lambda found: len(found) >= 3)
        assert len({json.loads(d.body)["id"] for d in deliveries}) == 1
        for delivery in deliveries:
            assert (
                stripe.Webhook.construct_event(delivery.body, delivery.signature, secret).data.object.id
                == session_id
            )
        # The sandbox records an attempt when the endpoint's answer reaches it, after the receiver
        # has kept the body: the third answer is read once the delivery has ended
        event = delivery_ended(sandbox, "checkout.session.expired")
        assert [a["status"] for a in event["deliveries"][0]["attempts"]] == [500, 503, 200]
        assert event["deliveries"][0]["state"] == "succeeded"


def test_a_session_left_open_expires_on_its_own_and_says_so(sandbox: PaymentsSandboxServer) -> None:
    with WebhookReceiver() as receiver:
        client, account, secret = connected(sandbox, receiver)
        session_id = mug_session(client, account)
        # When a day passes on the sandbox's clock, with no call to the API
        httpx.post(f"{sandbox.url}/_admin/clock", json={"seconds": 24 * 3600}).raise_for_status()
        # Then the expiry event arrives by itself
        [delivery] = receiver.wait_for(lambda found: len(found) >= 1)
        event = stripe.Webhook.construct_event(delivery.body, delivery.signature, secret)
        assert (event.type, event.data.object.id, event.data.object.url) == (
            "checkout.session.expired",
            session_id,
            None,
        )
