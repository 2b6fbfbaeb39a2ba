"""Checkout Sessions (docs/payments-notes.md §3): created on a connected account through the
``Stripe-Account`` header, paid on the hosted page (``pages``), expired by the timer or the API.
A session lives in the account it was created on: asked for under another account, it does not exist.
"""

from __future__ import annotations

import re

from flask import Blueprint

from payments_sandbox import errors, lifecycle
from payments_sandbox.api import ApiCall, Payload, api_endpoint, list_object, public_base
from payments_sandbox.params import Params
from payments_sandbox.world import CheckoutSession, LineItem, SessionStatus, new_id

blueprint = Blueprint("checkout", __name__)

PRICE_DATA = {
    "currency": True,
    "unit_amount": True,
    "unit_amount_decimal": True,
    "product": True,
    "product_data": {"name": True, "description": True, "images": [True], "metadata": "map"},
    "tax_behavior": True,
}
SESSION_SCHEMA = {
    "mode": True,
    "ui_mode": True,
    "line_items": [{"price": True, "price_data": PRICE_DATA, "quantity": True}],
    "success_url": True,
    "cancel_url": True,
    "client_reference_id": True,
    "customer_email": True,
    "expires_at": True,
    "metadata": "map",
    "payment_method_types": [True],
    "payment_intent_data": {
        "application_fee_amount": True,
        "description": True,
        "metadata": "map",
        "on_behalf_of": True,
        "transfer_data": {"destination": True, "amount": True},
    },
    "expand": [True],
}
# `hosted_page` in the API version the reference was read at, `hosted` before (docs/payments-notes.md §3.2).
HOSTED_UI_MODES = ("hosted_page", "hosted")
UI_MODES = ["custom", "elements", "embedded", "embedded_page", "form", "hosted", "hosted_page"]
EXPANDABLE = ("line_items", "payment_intent")


@api_endpoint(blueprint, "/checkout/sessions", ["POST"], SESSION_SCHEMA)
def create_session(call: ApiCall) -> Payload:
    """Create an open session with a hosted page, on the connected account the call acts as."""
    params, state = call.params, call.state
    mode = params.choice("mode", choices=["payment", "setup", "subscription"])
    if mode is None:
        raise errors.parameter_missing("mode")
    if mode != "payment":
        raise errors.invalid_request("The payments sandbox models mode=payment only.", param="mode")
    ui_mode = params.choice("ui_mode", choices=UI_MODES, default="hosted_page") or "hosted_page"
    if ui_mode not in HOSTED_UI_MODES:
        raise errors.invalid_request("The payments sandbox models the hosted page only.", param="ui_mode")
    for index, method in enumerate(params.strings("payment_method_types")):
        if method != "card":
            raise errors.invalid_request(
                f"The payment method type provided: {method} is invalid. The payments sandbox takes "
                "cards only.",
                param=f"payment_method_types[{index}]",
            )
    created = int(call.now)
    items = _line_items(call, created)
    currencies = {item.currency for item in items}
    if len(currencies) > 1:
        raise errors.invalid_request(
            "All line items in a Checkout Session must use the same currency.", param="line_items"
        )
    if call.account is not None and not call.account.charges_enabled:
        raise errors.invalid_request(
            f"The account {call.account.account_id} cannot accept payments yet: its onboarding is not "
            "complete (charges_enabled is false).",
            param="Stripe-Account",
        )
    fee = params.integer("payment_intent_data", "application_fee_amount")
    if fee is not None:
        if fee < 0:
            raise errors.invalid_request(
                "This value must be greater than or equal to 0.",
                param="payment_intent_data[application_fee_amount]",
            )
        if (
            call.account is None
            and params.text("payment_intent_data", "transfer_data", "destination") is None
        ):
            raise errors.invalid_request(
                "Can only apply an application_fee_amount when the PaymentIntent is attempting a direct "
                "payment (using an OAuth key or Stripe-Account header) or destination payment (using "
                "`transfer_data[destination]`).",
                param="payment_intent_data[application_fee_amount]",
            )
    client_reference_id = params.text("client_reference_id")
    if client_reference_id is not None and len(client_reference_id) > 200:
        raise errors.invalid_request(
            "client_reference_id can be at most 200 characters.", param="client_reference_id"
        )
    session_id = new_id("cs_test", 58)
    session = CheckoutSession(
        session_id=session_id,
        account_id=call.account_id,
        created=created,
        expires_at=_expires_at(call, created),
        mode=mode,
        currency=items[0].currency,
        line_items=items,
        page_url=f"{public_base(state)}/c/pay/{session_id}",
        success_url=_url(call, "success_url"),
        cancel_url=_url(call, "cancel_url"),
        client_reference_id=client_reference_id,
        customer_email=params.text("customer_email"),
        metadata=params.metadata("metadata"),
        ui_mode=ui_mode,
        intent_metadata=params.metadata("payment_intent_data", "metadata"),
        application_fee_amount=fee,
    )
    state.world.sessions[session_id] = session
    return _view(call, session)


@api_endpoint(blueprint, "/checkout/sessions/<session_id>", ["GET"], {"expand": [True]})
def retrieve_session(call: ApiCall, session_id: str) -> Payload:
    return _view(call, _session(call, session_id))


@api_endpoint(
    blueprint,
    "/checkout/sessions/<session_id>/line_items",
    ["GET"],
    {"limit": True, "starting_after": True, "expand": [True]},
)
def session_line_items(call: ApiCall, session_id: str) -> Payload:
    session = _session(call, session_id)
    items = [item.to_api() for item in session.line_items]
    return list_object(items, f"/v1/checkout/sessions/{session_id}/line_items", call.params)


@api_endpoint(blueprint, "/checkout/sessions/<session_id>/expire", ["POST"], {"expand": [True]})
def expire_session(call: ApiCall, session_id: str) -> Payload:
    """Expire an open session now; any other status is refused (docs/payments-notes.md §3.3)."""
    session = _session(call, session_id)
    if session.status is not SessionStatus.OPEN:
        raise errors.invalid_request(
            f'Only Checkout Sessions with a status in ["open"] can be expired. This Checkout Session has '
            f'a status of "{session.status.value}".',
            param="session",
        )
    lifecycle.expire_session(call.state, session, call.origin)
    return _view(call, session)


def _session(call: ApiCall, session_id: str) -> CheckoutSession:
    session = call.state.world.sessions.get(session_id)
    if session is None or session.account_id != call.account_id:
        raise errors.resource_missing("checkout.session", session_id, "session")
    return session


def _view(call: ApiCall, session: CheckoutSession) -> Payload:
    """The session as answered, with the expansions asked for."""
    body = session.to_api()
    for name in call.expand():
        if name not in EXPANDABLE:
            raise errors.invalid_request(f"This property cannot be expanded ({name}).", param="expand")
        if name == "line_items":
            items = [item.to_api() for item in session.line_items]
            body["line_items"] = {
                "object": "list",
                "data": items,
                "has_more": False,
                "url": f"/v1/checkout/sessions/{session.session_id}/line_items",
            }
        elif session.payment_intent_id is not None:
            body["payment_intent"] = call.state.world.payment_intents[session.payment_intent_id].to_api()
    return body


def _line_items(call: ApiCall, created: int) -> list[LineItem]:
    params = call.params
    raw = params.get("line_items")
    if not raw:
        raise errors.parameter_missing("line_items")
    items = []
    for index in range(len(raw)):
        prefix = ("line_items", index)
        price = params.text(*prefix, "price")
        if price is not None:
            raise errors.resource_missing("price", price, Params.name(*prefix, "price"))
        if params.get(*prefix, "price_data") is None:
            raise errors.parameter_missing(Params.name(*prefix, "price_data"))
        currency = params.required_text(*prefix, "price_data", "currency").lower()
        if not re.fullmatch(r"[a-z]{3}", currency):
            raise errors.invalid_request(
                f"Invalid currency: {currency}.", param=Params.name(*prefix, "price_data", "currency")
            )
        unit_amount = _unit_amount(call, prefix)
        product = params.text(*prefix, "price_data", "product")
        if product is not None:
            raise errors.resource_missing("product", product, Params.name(*prefix, "price_data", "product"))
        if params.get(*prefix, "price_data", "product_data") is None:
            raise errors.parameter_missing(Params.name(*prefix, "price_data", "product_data"))
        name = params.required_text(*prefix, "price_data", "product_data", "name")
        quantity = params.integer(*prefix, "quantity")
        if quantity is None:
            raise errors.parameter_missing(Params.name(*prefix, "quantity"))
        if quantity < 1:
            raise errors.invalid_request(
                "Quantity must be greater than or equal to 1.", param=Params.name(*prefix, "quantity")
            )
        items.append(
            LineItem(
                new_id("li"),
                name,
                currency,
                unit_amount,
                quantity,
                new_id("price"),
                new_id("prod", 14),
                created,
            )
        )
    return items


def _unit_amount(call: ApiCall, prefix: tuple[str, int]) -> int:
    """``unit_amount`` (a non-negative integer in the smallest unit) or ``unit_amount_decimal``, not both."""
    params = call.params
    amount = params.integer(*prefix, "price_data", "unit_amount")
    decimal = params.text(*prefix, "price_data", "unit_amount_decimal")
    param = Params.name(*prefix, "price_data", "unit_amount")
    if amount is not None and decimal is not None:
        raise errors.invalid_request(
            "You may only specify one of these parameters: unit_amount, unit_amount_decimal.", param=param
        )
    if decimal is not None:
        if not re.fullmatch(r"\d+(\.\d{1,12})?", decimal):
            raise errors.invalid_request(f"Invalid decimal: {decimal}", param=f"{param}_decimal")
        if float(decimal) != int(float(decimal)):
            # Sub-unit amounts exist for metered prices only; a one-time payment charges whole units.
            raise errors.invalid_request(
                "The payments sandbox charges whole amounts in the smallest currency unit only.",
                param=f"{param}_decimal",
            )
        amount = int(float(decimal))
    if amount is None:
        raise errors.parameter_missing(param)
    if amount < 0:
        raise errors.invalid_request("This value must be greater than or equal to 0.", param=param)
    return amount


def _expires_at(call: ApiCall, created: int) -> int:
    """``expires_at`` between 30 minutes and 24 hours after creation; 24 hours when not given."""
    config = call.state.config
    expires_at = call.params.integer("expires_at")
    if expires_at is None:
        return created + config.session_default_seconds
    if expires_at - created > config.session_max_seconds:
        raise errors.invalid_request(
            "The `expires_at` timestamp must be less than 24 hours from Checkout Session creation.",
            param="expires_at",
        )
    if expires_at - created < config.session_min_seconds:
        raise errors.invalid_request(
            "The `expires_at` timestamp must be at least 30 minutes from Checkout Session creation.",
            param="expires_at",
        )
    return expires_at


def _url(call: ApiCall, name: str) -> str | None:
    value = call.params.text(name)
    if value is None:
        return None
    if not value.startswith(("http://", "https://")):
        raise errors.invalid_request(f"Not a valid URL: {name}", param=name, code="url_invalid")
    return value
