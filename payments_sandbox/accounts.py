"""Connected accounts and Account Links (docs/payments-notes.md §2)."""

from __future__ import annotations

import secrets

from flask import Blueprint

from payments_sandbox import errors
from payments_sandbox.api import ApiCall, Payload, api_endpoint, public_base
from payments_sandbox.world import Account, AccountLink, new_id

blueprint = Blueprint("accounts", __name__)

ACCOUNT_TYPES = ["custom", "express", "standard"]
CAPABILITIES = {"requested": True}
ACCOUNT_SCHEMA = {
    "type": True,
    "country": True,
    "email": True,
    "default_currency": True,
    "business_type": True,
    "business_profile": {
        "name": True,
        "url": True,
        "mcc": True,
        "product_description": True,
        "support_email": True,
    },
    "capabilities": {"card_payments": CAPABILITIES, "transfers": CAPABILITIES},
    "controller": {
        "fees": {"payer": True},
        "losses": {"payments": True},
        "requirement_collection": True,
        "stripe_dashboard": {"type": True},
    },
    "metadata": "map",
    "expand": [True],
}
LINK_SCHEMA = {
    "account": True,
    "type": True,
    "refresh_url": True,
    "return_url": True,
    "collect": True,
    "collection_options": {"fields": True, "future_requirements": True},
    "expand": [True],
}
# What the controller's dashboard type means for the account's type (docs/payments-notes.md §2.1).
DASHBOARD_TYPES = {"full": "standard", "express": "express", "none": "custom"}


@api_endpoint(blueprint, "/accounts", ["POST"], ACCOUNT_SCHEMA)
def create_account(call: ApiCall) -> Payload:
    """Create a connected account: not yet onboarded, so charges and payouts are off."""
    params, config = call.params, call.state.config
    dashboard = params.choice("controller", "stripe_dashboard", "type", choices=["express", "full", "none"])
    account_type = params.choice("type", choices=ACCOUNT_TYPES) or DASHBOARD_TYPES.get(
        dashboard or "", "standard"
    )
    country = (params.text("country") or config.country).upper()
    if len(country) != 2 or not country.isalpha():
        raise errors.invalid_request(
            f"Country '{country}' is unknown. Try another country code.", param="country"
        )
    requested = [
        name for name in ("card_payments", "transfers") if params.boolean("capabilities", name, "requested")
    ]
    controller = params.get("controller") or {}
    account = Account(
        account_id=new_id("acct", 16),
        type=account_type,
        country=country,
        email=params.text("email"),
        created=int(call.now),
        default_currency=(params.text("default_currency") or config.default_currency).lower(),
        business_name=params.text("business_profile", "name"),
        controller=controller if isinstance(controller, dict) else {},
        requested_capabilities=requested,
        metadata=params.metadata("metadata"),
    )
    call.state.world.accounts[account.account_id] = account
    return account.to_api()


@api_endpoint(blueprint, "/accounts/<account_id>", ["GET"], {"expand": [True]})
def retrieve_account(call: ApiCall, account_id: str) -> Payload:
    return _account(call, account_id).to_api()


@api_endpoint(blueprint, "/account", ["GET"], {"expand": [True]})
def retrieve_own_account(call: ApiCall) -> Payload:
    """The account the call acts as: the connected one named by ``Stripe-Account``, else the platform."""
    if call.account is not None:
        return call.account.to_api()
    config = call.state.config
    return {
        "id": config.platform_account_id,
        "object": "account",
        "business_profile": {"name": config.platform_name},
        "charges_enabled": True,
        "country": config.country,
        "default_currency": config.default_currency,
        "details_submitted": True,
        "payouts_enabled": True,
        "type": "standard",
    }


@api_endpoint(blueprint, "/accounts/<account_id>", ["DELETE"], {})
def delete_account(call: ApiCall, account_id: str) -> Payload:
    """Remove a connected account (test-mode accounts may be deleted); it no longer exists."""
    account = _account(call, account_id)
    del call.state.world.accounts[account.account_id]
    return {"id": account.account_id, "object": "account", "deleted": True}


@api_endpoint(blueprint, "/account_links", ["POST"], LINK_SCHEMA)
def create_account_link(call: ApiCall) -> Payload:
    """A single-use link to the hosted onboarding page, valid ``account_link_seconds``."""
    params, state = call.params, call.state
    account = _account(call, params.required_text("account"), param="account")
    link_type = params.choice("type", choices=["account_onboarding", "account_update"])
    if link_type is None:
        raise errors.parameter_missing("type")
    if link_type == "account_update" and account.type != "custom":
        raise errors.invalid_request(
            "You cannot create `account_update` type Account Links for accounts where the platform "
            "does not collect requirements (accounts with a Stripe-hosted Dashboard).",
            param="type",
        )
    params.choice("collect", choices=["currently_due", "eventually_due"])
    refresh_url, return_url = _url(call, "refresh_url"), _url(call, "return_url")
    token = secrets.token_urlsafe(18)
    link = AccountLink(
        token=token,
        account_id=account.account_id,
        type=link_type,
        refresh_url=refresh_url,
        return_url=return_url,
        created=int(call.now),
        expires_at=int(call.now) + state.config.account_link_seconds,
        url=f"{public_base(state)}/setup/s/{account.account_id}/{token}",
    )
    state.world.account_links[token] = link
    return link.to_api()


def _account(call: ApiCall, account_id: str, *, param: str = "account") -> Account:
    account = call.state.world.accounts.get(account_id)
    if account is None:
        raise errors.resource_missing("account", account_id, param)
    return account


def _url(call: ApiCall, name: str) -> str | None:
    value = call.params.text(name)
    if value is None:
        return None
    if not value.startswith(("http://", "https://")):
        raise errors.invalid_request(f"Not a valid URL: {name}", param=name, code="url_invalid")
    return value
