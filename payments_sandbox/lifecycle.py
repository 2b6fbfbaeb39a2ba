"""What changes accounts, sessions and payments, with the events each change sends
(docs/payments-notes.md §2-§4): onboarding, payment on the hosted page (and the dispute a dispute
test card brings), expiry by the timer or the API. Callers hold the state's lock.
"""

from __future__ import annotations

from typing import Any

from payments_sandbox import cards
from payments_sandbox.events import RequestOrigin, emit
from payments_sandbox.state import PaymentsSandboxState
from payments_sandbox.world import (
    DISPUTE_RESPONSE_SECONDS,
    Account,
    Charge,
    CheckoutSession,
    Dispute,
    PaymentIntent,
    SessionStatus,
    new_id,
)

ACCOUNT_FIELDS = ("charges_enabled", "payouts_enabled", "details_submitted", "requirements", "capabilities")


def change_account(
    state: PaymentsSandboxState,
    account: Account,
    changes: dict[str, Any],
    origin: RequestOrigin | None = None,
) -> None:
    """Apply ``changes`` (attribute -> value) and send ``account.updated`` with what they replaced."""
    before = account.to_api()
    for name, value in changes.items():
        setattr(account, name, value)
    after = account.to_api()
    previous = {name: before[name] for name in ACCOUNT_FIELDS if before[name] != after[name]}
    if previous:
        emit(
            state,
            "account.updated",
            after,
            account=account.account_id,
            origin=origin,
            previous_attributes=previous,
        )


def complete_onboarding(state: PaymentsSandboxState, account: Account, business_name: str | None) -> None:
    """The account holder submitted the hosted onboarding form: details in, charges and payouts on."""
    change_account(
        state,
        account,
        {
            "business_name": business_name or account.business_name,
            "details_submitted": True,
            "charges_enabled": True,
            "payouts_enabled": True,
            "currently_due": [],
            "disabled_reason": None,
            "tos_accepted_at": int(state.now()),
        },
    )


def expire_session(
    state: PaymentsSandboxState, session: CheckoutSession, origin: RequestOrigin | None = None
) -> None:
    """Open -> expired, and ``checkout.session.expired`` (docs/payments-notes.md §3.3)."""
    session.status = SessionStatus.EXPIRED
    emit(state, "checkout.session.expired", session.to_api(), account=session.account_id, origin=origin)


def sweep(state: PaymentsSandboxState) -> None:
    """Expire every open session whose ``expires_at`` has passed on the sandbox clock."""
    now = state.now()
    for session in list(state.world.sessions.values()):
        if session.status is SessionStatus.OPEN and session.expires_at <= now:
            expire_session(state, session)


def _intent_for(state: PaymentsSandboxState, session: CheckoutSession) -> PaymentIntent:
    """The session's PaymentIntent, made at the first attempt to pay."""
    if session.payment_intent_id is not None:
        return state.world.payment_intents[session.payment_intent_id]
    intent = PaymentIntent(
        intent_id=new_id("pi"),
        account_id=session.account_id,
        amount=session.amount_total,
        currency=session.currency,
        created=int(state.now()),
        metadata=dict(session.intent_metadata),
        application_fee_amount=session.application_fee_amount,
    )
    state.world.payment_intents[intent.intent_id] = intent
    session.payment_intent_id = intent.intent_id
    return intent


def pay(
    state: PaymentsSandboxState,
    session: CheckoutSession,
    result: cards.CardResult,
    *,
    last4: str,
    email: str,
    name: str,
) -> None:
    """Record a card attempt on an open session and its consequences.

    Succeeded: the session completes, paid, with ``checkout.session.completed`` and
    ``payment_intent.succeeded`` (then, for a dispute test card, the dispute's events). Declined: the
    session stays open for another card, with ``payment_intent.payment_failed``. Requires
    authentication: the intent waits for the challenge.
    An invalid card (number, expiry, CVC) never reaches a PaymentIntent.
    """
    session.attempts.append({"last4": last4, "outcome": result.outcome.value, "code": result.code})
    if result.outcome is cards.Outcome.INVALID:
        return
    intent = _intent_for(state, session)
    intent.card_last4 = last4
    session.customer_details = {"email": email or None, "name": name or None}
    if result.outcome is cards.Outcome.REQUIRES_AUTHENTICATION:
        intent.status = "requires_action"
        return
    if result.outcome is cards.Outcome.DECLINED:
        intent.status = "requires_payment_method"
        intent.last_payment_error = {
            "code": result.code,
            "decline_code": result.decline_code,
            "message": result.message,
            "type": "card_error",
        }
        emit(state, "payment_intent.payment_failed", intent.to_api(), account=session.account_id)
        return
    intent.status, intent.last_payment_error = "succeeded", None
    charge = Charge(
        charge_id=new_id("ch"),
        account_id=session.account_id,
        intent_id=intent.intent_id,
        amount=intent.amount,
        currency=intent.currency,
        created=int(state.now()),
        metadata=dict(intent.metadata),
        card_last4=last4,
    )
    state.world.charges[charge.charge_id] = charge
    intent.latest_charge = charge.charge_id
    session.status, session.payment_status = SessionStatus.COMPLETE, "paid"
    emit(state, "checkout.session.completed", session.to_api(), account=session.account_id)
    emit(state, "payment_intent.succeeded", intent.to_api(), account=session.account_id)
    if result.dispute is not None:
        # A dispute test card: the card's bank disputes the payment once it succeeded.
        reason, status = result.dispute
        open_dispute(state, charge, reason, status)


def success_location(session: CheckoutSession) -> str | None:
    """``success_url`` with the literal ``{CHECKOUT_SESSION_ID}`` replaced (docs/payments-notes.md §3.1)."""
    if session.success_url is None:
        return None
    return session.success_url.replace("{CHECKOUT_SESSION_ID}", session.session_id)


def open_dispute(state: PaymentsSandboxState, charge: Charge, reason: str, status: str) -> Dispute:
    """The card's bank disputes ``charge`` (all of it): ``charge.dispute.created``, and for a dispute
    (not an inquiry) the funds withdrawn from the account with ``charge.dispute.funds_withdrawn``."""
    now = int(state.now())
    dispute = Dispute(
        dispute_id=new_id("du"),
        account_id=charge.account_id,
        charge_id=charge.charge_id,
        intent_id=charge.intent_id,
        amount=charge.amount,
        currency=charge.currency,
        created=now,
        reason=reason,
        status=status,
        due_by=now + DISPUTE_RESPONSE_SECONDS,
    )
    state.world.disputes[dispute.dispute_id] = dispute
    charge.disputed = True
    emit(state, "charge.dispute.created", dispute.to_api(), account=charge.account_id)
    if not status.startswith("warning_"):
        _move_funds(state, dispute, -dispute.amount, "charge.dispute.funds_withdrawn", None)
    return dispute


def close_dispute(
    state: PaymentsSandboxState, dispute: Dispute, status: str, origin: RequestOrigin | None
) -> None:
    """Close ``dispute`` as ``status`` (won, lost, warning_closed): ``charge.dispute.closed``, and the
    funds back with ``charge.dispute.funds_reinstated`` when won."""
    previous = {"status": dispute.status}
    dispute.status = status
    emit(
        state,
        "charge.dispute.closed",
        dispute.to_api(),
        account=dispute.account_id,
        origin=origin,
        previous_attributes=previous,
    )
    if status == "won":
        _move_funds(state, dispute, dispute.amount, "charge.dispute.funds_reinstated", origin)


def _move_funds(
    state: PaymentsSandboxState, dispute: Dispute, amount: int, event: str, origin: RequestOrigin | None
) -> None:
    """A balance transaction of the dispute (withdrawn: negative; reinstated: positive) and its event."""
    dispute.balance_transactions.append(
        {
            "id": new_id("txn"),
            "object": "balance_transaction",
            "amount": amount,
            "currency": dispute.currency,
            "created": int(state.now()),
            "reporting_category": "dispute" if amount < 0 else "dispute_reversal",
            "type": "adjustment",
        }
    )
    emit(state, event, dispute.to_api(), account=dispute.account_id, origin=origin)
