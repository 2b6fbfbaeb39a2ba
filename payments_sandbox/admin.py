"""The admin API under ``/_admin``: inspect what the sandbox received and holds, inject faults, move
its clock, drive the hosted pages without a browser, and run or repeat webhook deliveries.
JSON in and out, no authentication, loopback callers only.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, jsonify, request
from pydantic import BaseModel, ConfigDict

from payments_sandbox import cards, events, lifecycle
from payments_sandbox.api import current_state
from payments_sandbox.faults import FaultSpec
from payments_sandbox.pages import after_payment, pay_with_card
from payments_sandbox.state import PaymentsSandboxState
from payments_sandbox.world import Attempt, SessionStatus
from sandbox_kit.admin import ClockAdvance, add_shared_routes

blueprint = Blueprint("admin", __name__, url_prefix="/_admin")


class AccountChange(BaseModel):
    """What the provider may change on an account after onboarding (a review, a new requirement)."""

    model_config = ConfigDict(extra="forbid")
    charges_enabled: bool | None = None
    payouts_enabled: bool | None = None
    details_submitted: bool | None = None
    currently_due: list[str] | None = None
    disabled_reason: str | None = None


class Onboarding(BaseModel):
    model_config = ConfigDict(extra="forbid")
    business_name: str = "Sandbox Shop"


class Payment(BaseModel):
    """What the hosted page's Pay button sends (``authenticate``: the 3D Secure answer, if asked)."""

    model_config = ConfigDict(extra="forbid")
    card: str = "4242424242424242"
    expiry: str = "12 / 34"
    cvc: str = "123"
    email: str = "buyer@example.com"
    name: str = "Sandbox Buyer"
    authenticate: bool = True


class Resend(BaseModel):
    model_config = ConfigDict(extra="forbid")
    endpoint: str | None = None
    # Sign with this timestamp instead of now (an old one makes a replayed delivery).
    timestamp: int | None = None


@blueprint.post("/reset")
def reset() -> Response:
    """Forget everything: accounts, sessions, endpoints, events, keys, faults and the request log."""
    state = current_state()
    with state.lock:
        state.reset()
        return jsonify(_summary(state))


@blueprint.get("/state")
def show_state() -> Response:
    state = current_state()
    with state.lock:
        lifecycle.sweep(state)
        return jsonify(_summary(state))


@blueprint.post("/clock")
def advance_clock() -> Response:
    """Move the clock forward: sessions past ``expires_at`` expire, retries fall due."""
    advance = ClockAdvance.model_validate(_body())
    state = current_state()
    with state.lock:
        state.clock.advance(advance.seconds)
        lifecycle.sweep(state)
        state.wakeup.set()
        return jsonify({"now": state.now()})


@blueprint.post("/accounts/<account_id>/onboard")
def onboard(account_id: str) -> Response | tuple[Response, int]:
    """What submitting the hosted onboarding form does, without a browser."""
    wanted = Onboarding.model_validate(_body())
    state = current_state()
    with state.lock:
        account = state.world.accounts.get(account_id)
        if account is None:
            return jsonify({"error": f"unknown account {account_id}"}), 404
        lifecycle.complete_onboarding(state, account, wanted.business_name)
        return jsonify(account.to_api())


@blueprint.patch("/accounts/<account_id>")
def change_account(account_id: str) -> Response | tuple[Response, int]:
    """Change an account as the provider may (charges disabled, a new requirement): ``account.updated``."""
    change = AccountChange.model_validate(_body())
    state = current_state()
    with state.lock:
        account = state.world.accounts.get(account_id)
        if account is None:
            return jsonify({"error": f"unknown account {account_id}"}), 404
        lifecycle.change_account(
            state, account, {name: getattr(change, name) for name in change.model_fields_set}
        )
        return jsonify(account.to_api())


@blueprint.post("/checkout/sessions/<session_id>/pay")
def pay(session_id: str) -> Response | tuple[Response, int]:
    """What the hosted page's Pay button does, as JSON: ``{"outcome", "location"?, "error"?}``."""
    wanted = Payment.model_validate(_body())
    state = current_state()
    with state.lock:
        lifecycle.sweep(state)
        session = state.world.sessions.get(session_id)
        if session is None:
            return jsonify({"error": f"unknown session {session_id}"}), 404
        if session.status is not SessionStatus.OPEN:
            return jsonify({"error": f"the session is {session.status.value}"}), 409
        result = pay_with_card(
            state,
            session,
            number=wanted.card,
            expiry=wanted.expiry,
            cvc=wanted.cvc,
            email=wanted.email,
            name=wanted.name,
        )
        if result.outcome is cards.Outcome.REQUIRES_AUTHENTICATION:
            answer = cards.SUCCEEDS if wanted.authenticate else cards.AUTHENTICATION_FAILED
            last4 = cards.digits(wanted.card)[-4:]
            lifecycle.pay(state, session, answer, last4=last4, email=wanted.email, name=wanted.name)
            result = answer
        body: dict[str, Any] = {"outcome": result.outcome.value, "session": session.to_api()}
        if result.outcome is cards.Outcome.SUCCEEDS:
            body["location"] = after_payment(session)
        else:
            body["error"] = {
                "code": result.code,
                "decline_code": result.decline_code,
                "message": result.message,
            }
        return jsonify(body)


@blueprint.get("/events")
def list_events() -> Response:
    """Every event, oldest first, with its deliveries; ``?type=`` and ``?account=`` filter them."""
    type_, account = request.args.get("type"), request.args.get("account")
    state = current_state()
    with state.lock:
        lifecycle.sweep(state)
        found = [
            {**event.to_api(), "deliveries": [delivery.to_api() for delivery in event.deliveries]}
            for event in state.world.events.values()
            if (type_ is None or event.type == type_) and (account is None or event.account == account)
        ]
        return jsonify({"events": found})


@blueprint.post("/webhooks/deliver")
def deliver() -> Response:
    """Send every delivery that is due now (the dispatcher does this on its own; this waits for it)."""
    state = current_state()
    results = events.deliver_due(state)
    return jsonify({"attempts": [_attempt(sending, attempt) for sending, attempt in results]})


@blueprint.post("/events/<event_id>/resend")
def resend(event_id: str) -> Response | tuple[Response, int]:
    """Deliver an event again now: the same id and body, signed afresh (or at ``timestamp``)."""
    wanted = Resend.model_validate(_body())
    state = current_state()
    with state.lock:
        event = state.world.events.get(event_id)
        if event is None:
            return jsonify({"error": f"unknown event {event_id}"}), 404
    results = events.resend(state, event, endpoint_id=wanted.endpoint, signed_at=wanted.timestamp)
    return jsonify({"attempts": [_attempt(sending, attempt) for sending, attempt in results]})


def _attempt(sending: events.Sending, attempt: Attempt) -> dict[str, Any]:
    return {
        "event": sending.event.event_id,
        "type": sending.event.type,
        "endpoint": sending.endpoint.endpoint_id,
        **attempt.to_api(),
    }


def _body() -> dict[str, Any]:
    body = request.get_json(silent=True)
    return body if isinstance(body, dict) else {}


# Loopback only; the request log (also filtered by ``?account=``) and the fault queue.
add_shared_routes(
    blueprint,
    current_state=current_state,
    read_body=_body,
    parse_fault=FaultSpec.model_validate,
    request_filters=("account",),
)


def _summary(state: PaymentsSandboxState) -> dict[str, Any]:
    world = state.world
    return {
        "now": state.now(),
        "accounts": [account.to_api() for account in world.accounts.values()],
        "account_links": [
            {
                "account": link.account_id,
                "type": link.type,
                "url": link.url,
                "expires_at": link.expires_at,
                "visited": link.visited,
                "submitted": link.submitted,
            }
            for link in world.account_links.values()
        ],
        "checkout_sessions": [
            {**session.to_api(), "account": session.account_id, "attempts": session.attempts}
            for session in world.sessions.values()
        ],
        "payment_intents": [
            {**intent.to_api(), "account": intent.account_id} for intent in world.payment_intents.values()
        ],
        "charges": [{**charge.to_api(), "account": charge.account_id} for charge in world.charges.values()],
        "refunds": [{**refund.to_api(), "account": refund.account_id} for refund in world.refunds.values()],
        "disputes": [
            {**dispute.to_api(), "account": dispute.account_id} for dispute in world.disputes.values()
        ],
        "webhook_endpoints": [
            {**endpoint.to_api(), "owner": endpoint.owner, "connect": endpoint.connect}
            for endpoint in world.endpoints.values()
        ],
        "events": [
            {"id": event.event_id, "type": event.type, "account": event.account}
            for event in world.events.values()
        ],
        "idempotency_keys": len(state.idempotency),
    }
