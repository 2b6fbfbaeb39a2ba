"""Webhook deliveries are signed as the provider signs them (docs/payments-notes.md §4.2):
``Stripe-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">``, checked here by hand and
by the official SDK's own verifier."""

from __future__ import annotations

import hashlib
import hmac
import json

import pytest
import stripe

from tests.unit.sandbox_payments.harness import START, Harness


def paid_session_delivery(sandbox: Harness) -> tuple[bytes, str, str]:
    """A connect endpoint, a paid session, and the one delivery it got: (body, header, secret)."""
    endpoint = sandbox.endpoint(["checkout.session.completed"])
    account = sandbox.account()
    session = sandbox.session(account)
    sandbox.admin("POST", f"/checkout/sessions/{session['id']}/pay", {"card": "4242 4242 4242 4242"})
    assert sandbox.deliver() == 1
    delivery = sandbox.received[-1]
    return delivery.body, delivery.headers["stripe-signature"], endpoint["secret"]


def parts(header: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for item in header.split(","):
        name, _, value = item.partition("=")
        found.setdefault(name, []).append(value)
    return found


def test_v1_is_the_hmac_of_timestamp_dot_raw_body_keyed_with_the_endpoint_secret(sandbox: Harness) -> None:
    # Given a delivery of a completed session
    body, header, secret = paid_session_delivery(sandbox)
    # When the header is taken apart
    signed = parts(header)
    # Then t is the sandbox's clock at delivery and v1 is HMAC-SHA256("<t>.<body>") with the secret
    assert signed["t"] == [str(int(START))]
    expected = hmac.new(secret.encode(), f"{signed['t'][0]}.".encode() + body, hashlib.sha256).hexdigest()
    assert signed["v1"] == [expected]
    assert secret.startswith("whsec_")


def test_the_official_sdk_verifies_the_delivery_as_received(sandbox: Harness) -> None:
    body, header, secret = paid_session_delivery(sandbox)
    # When the SDK checks it against the endpoint's secret, at the moment it was signed
    event = stripe.Webhook.construct_event(body, header, secret, tolerance=None)
    # Then it is the completed session's event
    assert event.type == "checkout.session.completed"
    assert event.data.object.payment_status == "paid"


def test_a_v0_signature_is_sent_but_keyed_differently(sandbox: Harness) -> None:
    _, header, _ = paid_session_delivery(sandbox)
    signed = parts(header)
    # Then there is a v0, which is not the v1 scheme: a receiver reading v0 would fail
    assert len(signed["v0"]) == 1
    assert signed["v0"] != signed["v1"]


def test_a_body_changed_by_one_byte_no_longer_verifies(sandbox: Harness) -> None:
    body, header, secret = paid_session_delivery(sandbox)
    tampered = body.replace(b'"paid"', b'"unpaid"', 1)
    assert tampered != body
    with pytest.raises(stripe.SignatureVerificationError):
        stripe.WebhookSignature.verify_header(tampered, header, secret, tolerance=None)


def test_the_body_reserialised_no_longer_verifies(sandbox: Harness) -> None:
    # Given the raw body, pretty-printed as the provider sends it
    body, header, secret = paid_session_delivery(sandbox)
    compact = json.dumps(json.loads(body), separators=(",", ":")).encode()
    # Then the same JSON written again is not what was signed
    assert compact != body
    with pytest.raises(stripe.SignatureVerificationError):
        stripe.WebhookSignature.verify_header(compact, header, secret, tolerance=None)


def test_another_endpoints_secret_does_not_verify(sandbox: Harness) -> None:
    other = sandbox.endpoint(["payment_intent.payment_failed"])
    body, header, _ = paid_session_delivery(sandbox)
    with pytest.raises(stripe.SignatureVerificationError):
        stripe.WebhookSignature.verify_header(body, header, other["secret"], tolerance=None)


def test_a_resend_with_an_old_timestamp_is_outside_the_sdks_tolerance(sandbox: Harness) -> None:
    # Given a delivered event
    body, _, secret = paid_session_delivery(sandbox)
    event_id = json.loads(body)["id"]
    # When it is resent signed ten minutes ago (a replayed delivery)
    old = int(START) - 600
    sandbox.admin("POST", f"/events/{event_id}/resend", {"timestamp": old})
    replay = sandbox.received[-1]
    # Then it is the same event with a valid signature, which the SDK refuses at its default tolerance
    assert json.loads(replay.body)["id"] == event_id
    stripe.WebhookSignature.verify_header(
        replay.body, replay.headers["stripe-signature"], secret, tolerance=None
    )
    with pytest.raises(stripe.SignatureVerificationError, match="tolerance"):
        stripe.WebhookSignature.verify_header(
            replay.body, replay.headers["stripe-signature"], secret, tolerance=300
        )
