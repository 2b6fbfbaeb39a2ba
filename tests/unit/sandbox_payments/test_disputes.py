"""Disputes in the payments sandbox (docs/payments-notes.md §4.4), made as the provider's test mode
makes them: a dispute test card's payment succeeds, then its charge is disputed
(``charge.dispute.created``, ``charge.dispute.funds_withdrawn``); evidence submitted puts it under
review (``charge.dispute.updated``), the test mode's ``winning_evidence`` wins it
(``charge.dispute.closed``, ``charge.dispute.funds_reinstated``), accepting it loses it. Each event's
object is the Dispute, which names the charge and its PaymentIntent but carries none of their
metadata; each delivery is signed as every other."""

from __future__ import annotations

import json
from typing import Any

import stripe

from tests.unit.sandbox_payments.harness import Harness

DISPUTE_EVENTS = [
    "charge.dispute.created",
    "charge.dispute.updated",
    "charge.dispute.closed",
    "charge.dispute.funds_withdrawn",
    "charge.dispute.funds_reinstated",
]


def paid_with(sandbox: Harness, account: str, card: str) -> dict[str, Any]:
    """A session of two mugs (25.00 USD) paid with ``card``; its PaymentIntent."""
    session = sandbox.session(
        account, payment_intent_data={"metadata": {"org_id": "org-1", "checkout_id": "c1"}}
    )
    sandbox.admin("POST", f"/checkout/sessions/{session['id']}/pay", {"card": card})
    body = sandbox.call(
        "GET", f"/v1/checkout/sessions/{session['id']}", {"expand": ["payment_intent"]}, account=account
    ).get_json()
    intent: dict[str, Any] = body["payment_intent"]
    return intent


def delivered(sandbox: Harness) -> list[dict[str, Any]]:
    sandbox.deliver()
    return [json.loads(received.body) for received in sandbox.received]


def test_a_dispute_test_card_pays_then_its_charge_is_disputed(sandbox: Harness) -> None:
    # Given: an endpoint for the connected accounts' payments and disputes
    endpoint = sandbox.endpoint(["checkout.session.completed", *DISPUTE_EVENTS])
    account = sandbox.account()
    # When: a shopper pays with the fraudulent-dispute test card
    intent = paid_with(sandbox, account, "4000 0000 0000 0259")
    # Then: the payment succeeded, and its charge was disputed: the session's event, then the dispute's
    assert intent["status"] == "succeeded"
    events = delivered(sandbox)
    assert [event["type"] for event in events] == [
        "checkout.session.completed",
        "charge.dispute.created",
        "charge.dispute.funds_withdrawn",
    ]
    dispute = events[1]["data"]["object"]
    assert (dispute["object"], dispute["status"], dispute["reason"], dispute["amount"]) == (
        "dispute",
        "needs_response",
        "fraudulent",
        2500,
    )
    assert (dispute["charge"], dispute["payment_intent"], dispute["metadata"]) == (
        intent["latest_charge"],
        intent["id"],
        {},
    )
    assert dispute["evidence_details"]["due_by"] > dispute["created"]
    assert {event["account"] for event in events} == {account}
    # And the funds went with it, and the charge says it is disputed
    withdrawn = events[2]["data"]["object"]["balance_transactions"]
    assert [transaction["amount"] for transaction in withdrawn] == [-2500]
    charge = sandbox.call("GET", f"/v1/charges/{intent['latest_charge']}", account=account).get_json()
    assert charge["disputed"] is True
    # And every delivery is signed as the provider signs it
    for received in sandbox.received:
        stripe.Webhook.construct_event(
            received.body, received.headers["stripe-signature"], endpoint["secret"], tolerance=None
        )


def test_winning_evidence_puts_it_under_review_then_wins_it_back(sandbox: Harness) -> None:
    sandbox.endpoint(DISPUTE_EVENTS)
    account = sandbox.account()
    intent = paid_with(sandbox, account, "4000000000000259")
    [dispute] = sandbox.call(
        "GET", "/v1/disputes", {"payment_intent": intent["id"]}, account=account
    ).get_json()["data"]
    delivered(sandbox)
    sandbox.received.clear()
    # When: the merchant submits the test mode's winning evidence
    answer = sandbox.call(
        "POST",
        f"/v1/disputes/{dispute['id']}",
        {"evidence": {"uncategorized_text": "winning_evidence"}},
        account=account,
    )
    # Then: it went under review, then closed won, and the funds came back
    assert answer.status_code == 200, answer.get_json()
    events = delivered(sandbox)
    assert [(event["type"], event["data"]["object"]["status"]) for event in events] == [
        ("charge.dispute.updated", "under_review"),
        ("charge.dispute.closed", "won"),
        ("charge.dispute.funds_reinstated", "won"),
    ]
    assert events[0]["data"]["previous_attributes"]["status"] == "needs_response"
    assert answer.get_json()["evidence_details"]["submission_count"] == 1


def test_accepting_a_dispute_loses_it_and_a_closed_dispute_takes_no_evidence(sandbox: Harness) -> None:
    account = sandbox.account()
    intent = paid_with(sandbox, account, "4000000000002685")
    [dispute] = sandbox.admin("GET", "/state")["disputes"]
    assert (dispute["reason"], dispute["payment_intent"]) == ("product_not_received", intent["id"])
    closed = sandbox.call("POST", f"/v1/disputes/{dispute['id']}/close", account=account)
    assert closed.get_json()["status"] == "lost"
    late = sandbox.call(
        "POST", f"/v1/disputes/{dispute['id']}", {"evidence": {"uncategorized_text": "x"}}, account=account
    )
    assert late.status_code == 400
    assert sandbox.call("POST", f"/v1/disputes/{dispute['id']}/close", account=account).status_code == 400


def test_an_inquiry_withdraws_no_funds(sandbox: Harness) -> None:
    sandbox.endpoint(DISPUTE_EVENTS)
    account = sandbox.account()
    paid_with(sandbox, account, "4000000000001976")
    events = delivered(sandbox)
    assert [(event["type"], event["data"]["object"]["status"]) for event in events] == [
        ("charge.dispute.created", "warning_needs_response")
    ]


def test_a_dispute_of_another_account_does_not_exist_for_it(sandbox: Harness) -> None:
    account, other = sandbox.account(), sandbox.account()
    paid_with(sandbox, account, "4000000000000259")
    [dispute] = sandbox.admin("GET", "/state")["disputes"]
    refused = sandbox.call("GET", f"/v1/disputes/{dispute['id']}", account=other)
    assert (refused.status_code, refused.get_json()["error"]["code"]) == (404, "resource_missing")
