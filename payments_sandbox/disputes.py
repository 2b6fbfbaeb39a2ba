"""Disputes (chargebacks) in the payments sandbox (docs/payments-notes.md §4.4), made as the provider's
test mode makes them: paying with one of its dispute test cards succeeds, then the card's bank opens
a dispute of the charge (``charge.dispute.created``, and ``charge.dispute.funds_withdrawn`` for a
dispute, not an inquiry). The merchant answers with ``POST /v1/disputes/{id}`` (evidence, submitted
unless ``submit=false``: ``charge.dispute.updated``, under review) or accepts it with
``POST /v1/disputes/{id}/close`` (lost; an inquiry closes). Evidence whose ``uncategorized_text`` is
``winning_evidence`` or ``losing_evidence`` decides it at once (``charge.dispute.closed``, and
``charge.dispute.funds_reinstated`` when won), as in the provider's test mode. A dispute lives in the
account its charge was paid to: asked for under another, it does not exist.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint

from payments_sandbox import errors, lifecycle
from payments_sandbox.api import ApiCall, Payload, api_endpoint, list_object
from payments_sandbox.events import emit
from payments_sandbox.world import Dispute

blueprint = Blueprint("disputes", __name__)

EVIDENCE_FIELDS = (
    "access_activity_log",
    "billing_address",
    "cancellation_policy",
    "cancellation_policy_disclosure",
    "cancellation_rebuttal",
    "customer_communication",
    "customer_email_address",
    "customer_name",
    "customer_purchase_ip",
    "customer_signature",
    "duplicate_charge_documentation",
    "duplicate_charge_explanation",
    "duplicate_charge_id",
    "product_description",
    "receipt",
    "refund_policy",
    "refund_policy_disclosure",
    "refund_refusal_explanation",
    "service_date",
    "service_documentation",
    "shipping_address",
    "shipping_carrier",
    "shipping_date",
    "shipping_documentation",
    "shipping_tracking_number",
    "uncategorized_file",
    "uncategorized_text",
)
UPDATE_SCHEMA = {
    "evidence": dict.fromkeys(EVIDENCE_FIELDS, True),
    "metadata": "map",
    "submit": True,
    "expand": [True],
}
# What the test mode's evidence text decides: a dispute's outcome, or an inquiry's.
DECIDED = {
    "winning_evidence": {"needs_response": "won", "warning_needs_response": "warning_closed"},
    "losing_evidence": {"needs_response": "lost"},
}


@api_endpoint(blueprint, "/disputes/<dispute_id>", ["GET"], {"expand": [True]})
def retrieve_dispute(call: ApiCall, dispute_id: str) -> Payload:
    return _dispute(call, dispute_id).to_api()


@api_endpoint(
    blueprint,
    "/disputes",
    ["GET"],
    {"charge": True, "payment_intent": True, "limit": True, "starting_after": True, "expand": [True]},
)
def list_disputes(call: ApiCall) -> Payload:
    """The account's disputes, newest first (``charge``, ``payment_intent`` filter them)."""
    charge, intent = call.params.text("charge"), call.params.text("payment_intent")
    disputes = [
        dispute.to_api()
        for dispute in sorted(call.state.world.disputes.values(), key=lambda d: d.created, reverse=True)
        if dispute.account_id == call.account_id
        and charge in (None, dispute.charge_id)
        and intent in (None, dispute.intent_id)
    ]
    return list_object(disputes, "/v1/disputes", call.params)


@api_endpoint(blueprint, "/disputes/<dispute_id>", ["POST"], UPDATE_SCHEMA)
def update_dispute(call: ApiCall, dispute_id: str) -> Payload:
    """Stage evidence, and submit it unless ``submit=false``: the dispute goes under review."""
    dispute = _dispute(call, dispute_id)
    params = call.params
    evidence = {name: value for name in EVIDENCE_FIELDS if (value := params.text("evidence", name))}
    submit = params.boolean("submit")
    submit = True if submit is None else submit
    if dispute.closed or (submit and dispute.status.endswith("under_review")):
        raise errors.invalid_request(
            f"This dispute is already {'closed' if dispute.closed else 'under review'}: its evidence can no "
            "longer be changed.",
            param="evidence",
        )
    previous: dict[str, Any] = {}
    if evidence:
        previous["evidence"] = dict(dispute.evidence)
        dispute.evidence.update(evidence)
    dispute.metadata.update(params.metadata("metadata"))
    if submit:
        previous["status"] = dispute.status
        decided = DECIDED.get(dispute.evidence.get("uncategorized_text", ""), {}).get(dispute.status)
        dispute.status = dispute.status.replace("needs_response", "under_review")
        dispute.submission_count += 1
    else:
        decided = None
    emit(
        call.state,
        "charge.dispute.updated",
        dispute.to_api(),
        account=call.account_id,
        origin=call.origin,
        previous_attributes=previous,
    )
    if decided is not None:
        lifecycle.close_dispute(call.state, dispute, decided, call.origin)
    return dispute.to_api()


@api_endpoint(blueprint, "/disputes/<dispute_id>/close", ["POST"], {"expand": [True]})
def close_dispute(call: ApiCall, dispute_id: str) -> Payload:
    """Accept the dispute: lost (an inquiry closes)."""
    dispute = _dispute(call, dispute_id)
    if dispute.closed:
        raise errors.invalid_request("This dispute is already closed.")
    outcome = "warning_closed" if dispute.status.startswith("warning_") else "lost"
    lifecycle.close_dispute(call.state, dispute, outcome, call.origin)
    return dispute.to_api()


def _dispute(call: ApiCall, dispute_id: str) -> Dispute:
    dispute = call.state.world.disputes.get(dispute_id)
    if dispute is None or dispute.account_id != call.account_id:
        raise errors.resource_missing("dispute", dispute_id, "dispute")
    return dispute
