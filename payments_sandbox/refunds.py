"""Charges and refunds (docs/payments-notes.md §4.4): ``POST /v1/refunds`` on the connected account
the call acts as (``Stripe-Account``), for a PaymentIntent or a Charge, the whole unrefunded amount or
part of it. Each refund updates the charge (``amount_refunded``; ``refunded`` only once the whole
amount is) and sends ``charge.refunded`` (the charge) and ``refund.created`` (the refund), as the
provider does. A charge lives in the account it was paid to: asked for under another, it does not exist.
"""

from __future__ import annotations

from flask import Blueprint

from payments_sandbox import errors
from payments_sandbox.api import ApiCall, Payload, api_endpoint
from payments_sandbox.events import emit
from payments_sandbox.world import Charge, Refund, new_id

blueprint = Blueprint("refunds", __name__)

REFUND_SCHEMA = {
    "payment_intent": True,
    "charge": True,
    "amount": True,
    "reason": True,
    "metadata": "map",
    "expand": [True],
}
REASONS = ["duplicate", "fraudulent", "requested_by_customer"]


@api_endpoint(blueprint, "/refunds", ["POST"], REFUND_SCHEMA)
def create_refund(call: ApiCall) -> Payload:
    """Refund a charge of the account, in whole (no ``amount``) or in part."""
    params, state = call.params, call.state
    charge_id, intent_id = params.text("charge"), params.text("payment_intent")
    if charge_id is None and intent_id is None:
        raise errors.invalid_request(
            "One of the following params should be provided for this request: payment_intent or charge."
        )
    if charge_id is not None:
        charge = _charge(call, charge_id)
    else:
        assert intent_id is not None
        intent = state.world.payment_intents.get(intent_id)
        if intent is None or intent.account_id != call.account_id:
            raise errors.resource_missing("payment_intent", intent_id, "payment_intent")
        if intent.latest_charge is None:
            raise errors.invalid_request(
                f"This PaymentIntent ({intent_id}) does not have a successful charge to refund.",
                param="payment_intent",
            )
        charge = _charge(call, intent.latest_charge)
    left = charge.amount - charge.amount_refunded
    if left <= 0:
        raise errors.invalid_request(
            f"Charge {charge.charge_id} has already been refunded.", code="charge_already_refunded"
        )
    amount = params.integer("amount")
    if amount is None:
        amount = left
    if amount <= 0:
        raise errors.invalid_request(
            "Invalid positive integer", param="amount", code="parameter_invalid_integer"
        )
    if amount > left:
        raise errors.invalid_request(
            f"Refund amount ({amount}) is greater than unrefunded amount on charge ({left})",
            param="amount",
            code="amount_too_large",
        )
    refund = Refund(
        refund_id=new_id("re"),
        account_id=call.account_id,
        charge_id=charge.charge_id,
        intent_id=charge.intent_id,
        amount=amount,
        currency=charge.currency,
        created=int(call.now),
        reason=params.choice("reason", choices=REASONS),
        metadata=params.metadata("metadata"),
    )
    state.world.refunds[refund.refund_id] = refund
    previous = {"amount_refunded": charge.amount_refunded, "refunded": charge.to_api()["refunded"]}
    charge.amount_refunded += amount
    emit(
        state,
        "charge.refunded",
        charge.to_api(),
        account=call.account_id,
        origin=call.origin,
        previous_attributes=previous,
    )
    emit(state, "refund.created", refund.to_api(), account=call.account_id, origin=call.origin)
    return refund.to_api()


@api_endpoint(blueprint, "/refunds/<refund_id>", ["GET"], {"expand": [True]})
def retrieve_refund(call: ApiCall, refund_id: str) -> Payload:
    refund = call.state.world.refunds.get(refund_id)
    if refund is None or refund.account_id != call.account_id:
        raise errors.resource_missing("refund", refund_id, "refund")
    return refund.to_api()


@api_endpoint(blueprint, "/charges/<charge_id>", ["GET"], {"expand": [True]})
def retrieve_charge(call: ApiCall, charge_id: str) -> Payload:
    return _charge(call, charge_id).to_api()


def _charge(call: ApiCall, charge_id: str) -> Charge:
    charge = call.state.world.charges.get(charge_id)
    if charge is None or charge.account_id != call.account_id:
        raise errors.resource_missing("charge", charge_id, "charge")
    return charge
