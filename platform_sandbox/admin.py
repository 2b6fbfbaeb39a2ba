"""The admin API under ``/_admin``: set up scenarios, inject faults, mint tokens, inspect what the
sandbox received. JSON in and out, no authentication, loopback callers only.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, jsonify, request
from pydantic import BaseModel, ConfigDict, Field

from platform_sandbox import events, tokens
from platform_sandbox.config import BucQuotas
from platform_sandbox.faults import FaultSpec
from platform_sandbox.graph import current_state
from platform_sandbox.oauth import DialogRefused, DialogRequest, decide
from platform_sandbox.params import GraphParams
from platform_sandbox.scenarios import BUSINESS_ID, SCENARIOS
from platform_sandbox.state import SandboxState
from platform_sandbox.world import Business, CustomAudience
from sandbox_kit.admin import ClockAdvance, add_shared_routes

blueprint = Blueprint("admin", __name__, url_prefix="/_admin")


class ScenarioChoice(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str


class TokenRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    user_id: str | None = None
    scopes: list[str] = Field(default_factory=lambda: ["ads_management", "ads_read", "business_management"])
    # 0 means a token that never expires.
    expires_in: int = Field(default=5_184_000, ge=0)


class ApprovalRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    redirect_uri: str
    state: str = ""
    scope: str = "ads_management,ads_read,business_management"
    client_id: str | None = None
    approve: bool = True
    user_id: str | None = None


class AdAccountChange(BaseModel):
    """What ``PATCH /_admin/ad_accounts/<id>`` may change: what an advertiser changes in the
    platform's own settings (billing, business ownership, DSA defaults, currency)."""

    model_config = ConfigDict(extra="forbid")
    business_name: str | None = Field(default=None, description="null: the account leaves its business")
    currency: str | None = Field(default=None, pattern="^[A-Z]{3}$")
    min_daily_budget: int | None = Field(default=None, ge=1)
    funding_source: str | None = None
    default_dsa_beneficiary: str | None = None
    default_dsa_payor: str | None = None


@blueprint.post("/reset")
def reset() -> Response:
    """Back to the configured scenario; tokens, audiences, faults, usage and the log are cleared."""
    state = current_state()
    with state.lock:
        state.load_scenario(state.config.scenario)
        return jsonify(_summary(state))


@blueprint.post("/scenario")
def load_scenario() -> Response | tuple[Response, int]:
    """Body ``{"name": ...}``: replace the world with a named scenario (see ``scenarios.SCENARIOS``)."""
    choice = ScenarioChoice.model_validate(_body())
    if choice.name not in SCENARIOS:
        return jsonify({"error": f"unknown scenario {choice.name}", "scenarios": sorted(SCENARIOS)}), 404
    state = current_state()
    with state.lock:
        state.load_scenario(choice.name)
        return jsonify(_summary(state))


@blueprint.get("/state")
def show_state() -> Response:
    state = current_state()
    with state.lock:
        return jsonify(_summary(state))


@blueprint.post("/tokens")
def mint_token() -> Response | tuple[Response, int]:
    """Mint a user token without the OAuth dance. Body: ``user_id``, ``scopes``, ``expires_in``."""
    wanted = TokenRequest.model_validate(_body())
    state = current_state()
    with state.lock:
        user_id = wanted.user_id or state.world.dialog_user_id
        if user_id not in state.world.users:
            return jsonify({"error": f"unknown user {user_id}"}), 404
        token = tokens.mint_user_token(
            state.world, user_id, wanted.scopes, state.clock.now(), wanted.expires_in
        )
        return jsonify({"access_token": token.value, "user_id": user_id, "expires_in": wanted.expires_in})


@blueprint.post("/oauth/approve")
def approve() -> Response | tuple[Response, int]:
    """What the dialog's Approve (or Deny, ``approve: false``) button does, as JSON ``{"location"}``."""
    wanted = ApprovalRequest.model_validate(_body())
    state = current_state()
    with state.lock:
        dialog = DialogRequest(
            client_id=wanted.client_id or state.world.app.app_id,
            redirect_uri=wanted.redirect_uri,
            state=wanted.state,
            scope=wanted.scope,
        )
        try:
            location = decide(state, dialog, approve=wanted.approve, user_id=wanted.user_id)
        except DialogRefused as refused:
            return jsonify({"error": str(refused)}), 400
        return jsonify({"location": location})


@blueprint.put("/quotas")
def set_quotas() -> Response:
    """Calls per hour per ad account for each BUC type, e.g. ``{"custom_audience": 3}``."""
    quotas = BucQuotas.model_validate(_body())
    state = current_state()
    with state.lock:
        state.usage.quotas = quotas
        return jsonify(quotas.model_dump())


@blueprint.patch("/ad_accounts/<account_id>")
def change_ad_account(account_id: str) -> Response | tuple[Response, int]:
    """Change an ad account in place (only the fields given; ``null`` clears). The world, tokens
    and audiences stay, so a test can change the account after connecting."""
    change = AdAccountChange.model_validate(_body())
    state = current_state()
    with state.lock:
        account = state.world.accounts.get(account_id.removeprefix("act_"))
        if account is None:
            return jsonify({"error": f"unknown ad account {account_id}"}), 404
        for name in change.model_fields_set:
            value = getattr(change, name)
            if name == "business_name":
                business_id = account.business.business_id if account.business else BUSINESS_ID
                account.business = Business(business_id, value) if value else None
            elif name in {"currency", "min_daily_budget"} and value is None:
                return jsonify({"error": f"{name} cannot be cleared"}), 400
            else:
                setattr(account, name, value)
        return jsonify(_summary(state))


@blueprint.delete("/users/<user_id>/permissions/<permission>")
def remove_permission(user_id: str, permission: str) -> Response | tuple[Response, int]:
    """The user removes one permission from the app in the platform's settings: every token of the
    user loses it (``debug_token`` no longer lists it; calls that need it fail)."""
    state = current_state()
    with state.lock:
        if user_id not in state.world.users:
            return jsonify({"error": f"unknown user {user_id}"}), 404
        for token in state.world.tokens.values():
            if token.user_id == user_id and permission in token.scopes:
                token.scopes.remove(permission)
        return jsonify(_summary(state))


@blueprint.delete("/pixels/<pixel_id>")
def unlink_pixel(pixel_id: str) -> Response | tuple[Response, int]:
    """Unlink a pixel from its ad account, as an advertiser can in the platform's settings."""
    state = current_state()
    with state.lock:
        if state.world.pixels.pop(pixel_id, None) is None:
            return jsonify({"error": f"unknown pixel {pixel_id}"}), 404
        return jsonify(_summary(state))


@blueprint.delete("/pages/<page_id>/roles/<user_id>")
def remove_page_role(page_id: str, user_id: str) -> Response | tuple[Response, int]:
    """The user's role on a Page is removed, as an admin does in the business settings (or the Page
    leaves the business): the user's tokens no longer list it (``/me/accounts``, the ad account's
    ``promote_pages``) and a creative posted as it is refused."""
    state = current_state()
    with state.lock:
        page = state.world.pages.get(page_id)
        if page is None or page.roles.pop(user_id, None) is None:
            return jsonify({"error": f"user {user_id} has no role on page {page_id}"}), 404
        return jsonify(_summary(state))


@blueprint.post("/clock")
def advance_clock() -> Response:
    """Move the sandbox's clock forward by ``seconds`` (token expiry, code expiry, replace timeouts)."""
    advance = ClockAdvance.model_validate(_body())
    state = current_state()
    with state.lock:
        state.clock.advance(advance.seconds)
        return jsonify({"now": state.clock.now()})


@blueprint.get("/audiences/<audience_id>/members")
def members(audience_id: str) -> Response | tuple[Response, int]:
    """The rows received for an audience, grouped by schema: ``{"members": [{"schema", "rows"}]}``."""
    state = current_state()
    with state.lock:
        audience = state.world.audiences.get(audience_id)
        if audience is None:
            return jsonify({"error": f"unknown audience {audience_id}"}), 404
        groups = []
        for schema, rows in audience.members.items():
            if not rows:
                continue
            group: dict[str, Any] = {"schema": list(schema), "rows": [list(row) for row in sorted(rows)]}
            if audience.is_value_based:
                # Each row's LOOKALIKE_VALUE, in the rows' order (None: uploaded without one).
                group["values"] = [audience.values.get((schema, row)) for row in sorted(rows)]
            groups.append(group)
        return jsonify(
            {
                "audience_id": audience_id,
                "count": audience.member_count,
                "is_value_based": audience.is_value_based,
                "members": groups,
            }
        )


@blueprint.get("/pixels/<pixel_id>/events")
def pixel_events(pixel_id: str) -> Response | tuple[Response, int]:
    """What a pixel received through the Conversions API: totals, counts by event name (live and
    test, after de-duplication), ``last_fired_time``, and the latest events as received, oldest first
    (``?event_name=``, ``?test_event_code=`` filter them; at most ``events_kept_per_pixel`` are kept)."""
    name = request.args.get("event_name")
    code = request.args.get("test_event_code")
    state = current_state()
    with state.lock:
        pixel = state.world.pixels.get(pixel_id)
        if pixel is None:
            return jsonify({"error": f"unknown pixel {pixel_id}"}), 404
        activity = events.activity_of(state.world, pixel_id, state.config.events_kept_per_pixel)
        kept = [
            entry
            for entry in activity.events
            if (name is None or entry["event"].get("event_name") == name)
            and (code is None or entry["test_event_code"] == code)
        ]
        return jsonify(
            {
                "pixel_id": pixel_id,
                "received": activity.received,
                "deduplicated": activity.deduplicated,
                "counts": dict(activity.counted),
                "test_counts": dict(activity.test_counted),
                "last_fired_time": events.last_fired_time(state.world, pixel),
                "events": kept,
            }
        )


def _body() -> dict[str, Any]:
    body = GraphParams.from_request(request).values
    return {key: value for key, value in body.items() if key != "access_token"}


# Loopback only; the request log and the fault queue.
add_shared_routes(
    blueprint, current_state=current_state, read_body=_body, parse_fault=FaultSpec.model_validate
)


def _summary(state: SandboxState) -> dict[str, Any]:
    world = state.world
    return {
        "scenario": state.scenario,
        "app": {
            "app_id": world.app.app_id,
            "mode": world.app.mode.value,
            "roles": {user: sorted(role.value for role in roles) for user, roles in world.app.roles.items()},
        },
        "users": [{"id": user.user_id, "name": user.name} for user in world.users.values()],
        "ad_accounts": [
            {
                "id": account.graph_id,
                "name": account.name,
                "business": account.business.business_id if account.business else None,
                "tos_accepted": account.tos_accepted,
                "funding_source": account.funding_source,
                "pixels": [pixel.pixel_id for pixel in world.pixels_of(account.account_id)],
            }
            for account in world.accounts.values()
        ],
        "pages": [{"id": page.page_id, "name": page.name} for page in world.pages.values()],
        "audiences": [_audience_summary(audience) for audience in world.audiences.values()],
        "ad_objects": [
            {
                "id": o.object_id,
                "kind": o.kind,
                "account_id": o.account_id,
                "name": o.fields.get("name"),
                "status": o.fields.get("status"),
            }
            for o in world.ad_objects.values()
        ],
    }


def _audience_summary(audience: CustomAudience) -> dict[str, Any]:
    return {
        "id": audience.audience_id,
        "account_id": audience.account_id,
        "name": audience.name,
        "description": audience.description,
        "subtype": audience.subtype,
        "member_count": audience.member_count,
        "is_value_based": audience.is_value_based,
        "deleted": audience.deleted,
        "origin_audience_id": audience.origin_audience_id,
    }
