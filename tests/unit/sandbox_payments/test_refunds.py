"""Refunds in the payments sandbox (docs/payments-notes.md §4.4): ``POST /v1/refunds`` on the connected
account, in part or in whole, updates the charge and sends ``charge.refunded`` (the charge, with the
metadata the PaymentIntent had when it was confirmed) and ``refund.created``, signed as every delivery;
more than what is left, or a charge of another account, is refused as the provider refuses it."""

from __future__ import annotations

import json
from typing import Any

import stripe

from tests.unit.sandbox_payments.harness import Harness


def paid_intent(sandbox: Harness, account: str) -> str:
    """A session of two mugs (25.00 USD) paid by card, with the service's metadata on its payment."""
    session = sandbox.session(
        account,
        metadata={"org_id": "org-1"},
        payment_intent_data={"metadata": {"org_id": "org-1", "checkout_id": "c1"}},
    )
    sandbox.admin("POST", f"/checkout/sessions/{session['id']}/pay", {"card": "4242 4242 4242 4242"})
    intent: str = sandbox.call("GET", f"/v1/checkout/sessions/{session['id']}", account=account).get_json()[
        "payment_intent"
    ]
    return intent


def refund(sandbox: Harness, account: str, **params: Any) -> Any:
    return sandbox.call("POST", "/v1/refunds", params, account=account)


def test_a_partial_then_the_rest_refunded_sends_charge_refunded_each_time(sandbox: Harness) -> None:
    # Given: a paid payment and an endpoint for the connected accounts' refunds
    endpoint = sandbox.endpoint(["charge.refunded"])
    account = sandbox.account()
    intent = paid_intent(sandbox, account)
    # When: 10.00 is refunded, then the rest
    first = refund(sandbox, account, payment_intent=intent, amount=1000, reason="requested_by_customer")
    rest = refund(sandbox, account, payment_intent=intent)
    # Then: two refunds, of 10.00 and 15.00
    assert (first.status_code, rest.status_code) == (200, 200)
    assert (first.get_json()["amount"], rest.get_json()["amount"]) == (1000, 1500)
    assert first.get_json()["object"] == "refund"
    assert first.get_json()["status"] == "succeeded"
    # And each sent charge.refunded: partial (refunded false), then whole (refunded true)
    assert sandbox.deliver() == 2
    events = [json.loads(received.body) for received in sandbox.received]
    charges = [event["data"]["object"] for event in events]
    assert [(c["amount"], c["amount_refunded"], c["refunded"]) for c in charges] == [
        (2500, 1000, False),
        (2500, 2500, True),
    ]
    assert {event["type"] for event in events} == {"charge.refunded"}
    assert {event["account"] for event in events} == {account}
    assert {c["payment_intent"] for c in charges} == {intent}
    assert charges[0]["metadata"] == {"org_id": "org-1", "checkout_id": "c1"}
    assert events[0]["data"]["previous_attributes"] == {"amount_refunded": 0, "refunded": False}
    # And each delivery is signed as the provider signs it (checked at the moment it was signed: the
    # sandbox's clock stands still at the start of the test run, the SDK's tolerance reads the real one)
    for received in sandbox.received:
        stripe.Webhook.construct_event(
            received.body, received.headers["stripe-signature"], endpoint["secret"], tolerance=None
        )


def test_refund_created_is_sent_with_the_refund(sandbox: Harness) -> None:
    sandbox.endpoint(["refund.created"])
    account = sandbox.account()
    made = refund(sandbox, account, payment_intent=paid_intent(sandbox, account), amount=500).get_json()
    assert sandbox.deliver() == 1
    event = json.loads(sandbox.received[-1].body)
    assert (event["type"], event["data"]["object"]["id"], event["data"]["object"]["amount"]) == (
        "refund.created",
        made["id"],
        500,
    )


def test_more_than_is_left_and_a_second_whole_refund_are_refused(sandbox: Harness) -> None:
    account = sandbox.account()
    intent = paid_intent(sandbox, account)
    too_much = refund(sandbox, account, payment_intent=intent, amount=2501)
    assert too_much.status_code == 400
    assert too_much.get_json()["error"]["param"] == "amount"
    assert refund(sandbox, account, payment_intent=intent).status_code == 200
    again = refund(sandbox, account, payment_intent=intent)
    assert (again.status_code, again.get_json()["error"]["code"]) == (400, "charge_already_refunded")


def test_a_charge_of_another_account_does_not_exist_for_it(sandbox: Harness) -> None:
    account, other = sandbox.account(), sandbox.account()
    intent = paid_intent(sandbox, account)
    refused = refund(sandbox, other, payment_intent=intent)
    assert (refused.status_code, refused.get_json()["error"]["code"]) == (404, "resource_missing")
