"""Webhook retries (docs/payments-notes.md §4.3): a delivery the endpoint does not take with a 2xx
is tried again after each configured delay, then marked failed; a redelivery does not move that."""

from __future__ import annotations

import httpx
import pytest

from payments_sandbox import PaymentsSandboxConfig
from tests.unit.sandbox_payments.harness import Harness

DELAYS = [60.0, 600.0]


@pytest.fixture
def sandbox() -> Harness:
    return Harness(PaymentsSandboxConfig(webhook_retry_delays=DELAYS))


def completed_payment(sandbox: Harness) -> str:
    """A connect endpoint for completed sessions and one paid session; the event id."""
    sandbox.endpoint(["checkout.session.completed"])
    account = sandbox.account()
    session = sandbox.session(account)
    sandbox.admin("POST", f"/checkout/sessions/{session['id']}/pay", {})
    [event] = sandbox.events("checkout.session.completed")
    event_id: str = event["id"]
    return event_id


def delivery(sandbox: Harness, event_id: str) -> dict:
    [event] = [e for e in sandbox.events() if e["id"] == event_id]
    [found] = event["deliveries"]
    return found


def test_a_failed_delivery_is_retried_after_each_delay_then_marked_failed(sandbox: Harness) -> None:
    # Given an endpoint that answers 500 every time
    sandbox.answers.extend([500, 500, 500])
    event_id = completed_payment(sandbox)
    # When the first attempt fails, nothing more is sent until the first delay has passed
    assert sandbox.deliver() == 1
    sandbox.advance(59)
    assert sandbox.deliver() == 0
    sandbox.advance(1)
    assert sandbox.deliver() == 1
    sandbox.advance(599)
    assert sandbox.deliver() == 0
    sandbox.advance(1)
    assert sandbox.deliver() == 1
    # Then after the last retry the delivery has failed, and nothing more is sent
    sandbox.advance(24 * 3600)
    assert sandbox.deliver() == 0
    found = delivery(sandbox, event_id)
    assert found["state"] == "failed"
    assert [attempt["status"] for attempt in found["attempts"]] == [500, 500, 500]
    assert len(sandbox.received) == 3


def test_the_undelivered_event_is_listed_with_delivery_success_false(sandbox: Harness) -> None:
    sandbox.answers.extend([503])
    event_id = completed_payment(sandbox)
    sandbox.deliver()
    account = sandbox.events("checkout.session.completed")[0]["account"]
    listed = sandbox.call("GET", "/v1/events", {"delivery_success": False}, account=account).get_json()
    assert [event["id"] for event in listed["data"]] == [event_id]
    assert listed["data"][0]["pending_webhooks"] == 1


def test_a_retry_that_succeeds_ends_the_schedule(sandbox: Harness) -> None:
    sandbox.answers.extend([500, 200])
    event_id = completed_payment(sandbox)
    sandbox.deliver()
    sandbox.advance(60)
    assert sandbox.deliver() == 1
    sandbox.advance(24 * 3600)
    assert sandbox.deliver() == 0
    found = delivery(sandbox, event_id)
    assert found["state"] == "succeeded"
    assert [attempt["status"] for attempt in found["attempts"]] == [500, 200]


def test_no_answer_counts_as_a_failure(sandbox: Harness) -> None:
    sandbox.answers.extend([httpx.ConnectError("refused")])
    event_id = completed_payment(sandbox)
    sandbox.deliver()
    found = delivery(sandbox, event_id)
    assert (found["state"], found["attempts"][0]["status"], found["attempts"][0]["error"]) == (
        "pending",
        None,
        "ConnectError",
    )


def test_any_2xx_is_a_success(sandbox: Harness) -> None:
    sandbox.answers.extend([204])
    event_id = completed_payment(sandbox)
    sandbox.deliver()
    assert delivery(sandbox, event_id)["state"] == "succeeded"


def test_a_3xx_is_a_failure(sandbox: Harness) -> None:
    sandbox.answers.extend([302])
    event_id = completed_payment(sandbox)
    sandbox.deliver()
    assert delivery(sandbox, event_id)["state"] == "pending"


def test_each_retry_is_signed_at_its_own_time(sandbox: Harness) -> None:
    sandbox.answers.extend([500])
    completed_payment(sandbox)
    sandbox.deliver()
    sandbox.advance(60)
    sandbox.deliver()
    first, second = (r.headers["stripe-signature"].split(",")[0] for r in sandbox.received)
    assert int(second.removeprefix("t=")) - int(first.removeprefix("t=")) == 60


def test_a_redelivery_is_sent_with_the_same_id_and_does_not_move_the_schedule(sandbox: Harness) -> None:
    sandbox.answers.extend([500])
    event_id = completed_payment(sandbox)
    sandbox.deliver()
    # When the event is resent (and taken) before the retry is due
    sandbox.admin("POST", f"/events/{event_id}/resend", {})
    # Then the receiver got the same event twice, and the retry still comes at its time
    assert sandbox.received[0].body == sandbox.received[1].body
    sandbox.advance(60)
    assert sandbox.deliver() == 1
    assert [a["redelivery"] for a in delivery(sandbox, event_id)["attempts"]] == [False, True, False]
