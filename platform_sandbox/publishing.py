"""Publishing a conversion campaign: campaign -> ad set -> creative -> ad (docs/platform-notes.md §6, §A).

Each create checks what the platform is known to reject for the service's flow
(docs/service-contract.md §7.2), with the documented code and subcode, and stores the object so later
steps can refer to it. A create with ``execution_options=["validate_only"]`` runs every check and
stores nothing, answering ``{"success": true}`` (Marketing API "execution_options": "validate_only:
the API call will not perform the mutation but will run through the validation rules"). Objects are
updated with ``POST /<id>`` (``status``, ``name``, a budget: what the ads manager changes) and
deleted with ``DELETE /<id>``, both answering
``{"success": true}``; a deleted object stays readable with ``status`` ``DELETED``.
"""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import urlsplit

from flask import Blueprint

from platform_sandbox import errors
from platform_sandbox.graph import GraphCall, Payload, edge_page, graph_endpoint, project
from platform_sandbox.usage import BucType
from platform_sandbox.world import AdAccount, AdObject, AppMode

blueprint = Blueprint("publishing", __name__)

OBJECTIVES = frozenset(
    {
        "OUTCOME_SALES",
        "OUTCOME_LEADS",
        "OUTCOME_TRAFFIC",
        "OUTCOME_AWARENESS",
        "OUTCOME_ENGAGEMENT",
        "OUTCOME_APP_PROMOTION",
    }
)
# docs/platform-notes.md §6.1 (the SDK's enum).
SPECIAL_AD_CATEGORIES = frozenset(
    {
        "CREDIT",
        "EMPLOYMENT",
        "FINANCIAL_PRODUCTS_SERVICES",
        "HOUSING",
        "ISSUES_ELECTIONS_POLITICS",
        "NONE",
        "ONLINE_GAMBLING_AND_GAMING",
    }
)
CREATE_STATUSES = frozenset({"ACTIVE", "PAUSED"})
UPDATE_STATUSES = frozenset({"ACTIVE", "PAUSED", "ARCHIVED", "DELETED"})
VALIDATE_ONLY = "validate_only"
CONVERSION_EVENTS = frozenset(
    {
        "PURCHASE",
        "ADD_TO_CART",
        "CONTENT_VIEW",
        "INITIATED_CHECKOUT",
        "ADD_PAYMENT_INFO",
        "LEAD",
        "COMPLETE_REGISTRATION",
    }
)
# Where ads need a beneficiary and payer: the EU/EEA (DSA, docs/platform-notes.md §6.3) plus GB and AU
# (docs/service-contract.md §7.2).
DSA_COUNTRIES = frozenset(
    {"AT", "BE", "BG", "HR", "CY", "CZ", "DK", "EE", "FI", "FR", "DE", "GR", "HU", "IE", "IT", "LV", "LT"}
    | {"LU", "MT", "NL", "PL", "PT", "RO", "SK", "SI", "ES", "SE", "IS", "LI", "NO", "GB", "AU"}
)
KINDS = {"campaigns": "campaign", "adsets": "adset", "adcreatives": "adcreative", "ads": "ad"}


# Fields of the node type that may be unset (a campaign without a budget): readable, answered null.
BUDGET_FIELDS = {
    "campaign": ("daily_budget", "lifetime_budget"),
    "adset": ("daily_budget", "lifetime_budget"),
}


def ad_object_node(ad_object: AdObject) -> Payload:
    unset = dict.fromkeys(BUDGET_FIELDS.get(ad_object.kind, ()))
    return {"id": ad_object.object_id, "account_id": ad_object.account_id, **unset, **ad_object.fields}


@graph_endpoint(blueprint, "/act_<account_id>/campaigns", ["POST"])
def create_campaign(call: GraphCall, account_id: str) -> Payload:
    """Campaign: ODAX ``objective``, ``special_ad_categories`` required, and without a campaign
    budget ``is_adset_budget_sharing_enabled`` must be given (100/4834011, v24+)."""
    account = call.account(account_id, write=True, buc=BucType.ADS_MANAGEMENT)
    params = call.params
    objective = params.required_text("objective")
    if objective not in OBJECTIVES:
        raise errors.invalid_parameter(
            f"Objective {objective} is invalid. Use one of the OUTCOME_* objectives"
        )
    categories = params.json("special_ad_categories")
    if not isinstance(categories, list):
        raise errors.invalid_parameter(
            "The parameter special_ad_categories is required", blame="special_ad_categories"
        )
    unknown = [c for c in categories if c not in SPECIAL_AD_CATEGORIES]
    if unknown:
        raise errors.invalid_parameter(
            f"special_ad_categories[{categories.index(unknown[0])}] must be one of "
            f"{', '.join(sorted(SPECIAL_AD_CATEGORIES))}",
            blame="special_ad_categories",
        )
    has_budget = params.has("daily_budget") or params.has("lifetime_budget")
    sharing = params.boolean("is_adset_budget_sharing_enabled")
    if not has_budget and sharing is None:
        raise errors.invalid_parameter(
            "Must specify True or False in is_adset_budget_sharing_enabled field. "
            "This is required field starting v24 if you are not setting budget at the campaign level",
            subcode=4834011,
            blame="is_adset_budget_sharing_enabled",
        )
    fields = {
        "name": params.required_text("name"),
        "objective": objective,
        "special_ad_categories": categories,
        "daily_budget": params.integer("daily_budget"),
        "is_adset_budget_sharing_enabled": sharing,
        **_status_fields(call),
    }
    if _validate_only(call):
        return {"success": True}
    return {"id": _store(call, account, "campaign", fields).object_id}


@graph_endpoint(blueprint, "/act_<account_id>/adsets", ["POST"])
def create_ad_set(call: GraphCall, account_id: str) -> Payload:
    """Ad set: budget in minor units, a promoted pixel of this account for conversions, targeting
    with geo, audiences of this account (1487301), the advantage_audience flag (100/1870227) and
    DSA beneficiary/payer for regulated countries (100/3858081, 100/3858079)."""
    account = call.account(account_id, write=True, buc=BucType.ADS_MANAGEMENT)
    params = call.params
    campaign = _owned(call, account, params.required_text("campaign_id"), "campaign", "campaign_id")
    budget = params.integer("daily_budget") or params.integer("lifetime_budget")
    if campaign.fields.get("daily_budget") is None and (budget is None or budget < account.min_daily_budget):
        raise errors.invalid_parameter(
            f"Your budget is too low. The minimum daily budget is {account.min_daily_budget} in minor units",
            subcode=1885272,
            blame="daily_budget",
        )
    optimization_goal = params.required_text("optimization_goal")
    promoted_object = params.json_object("promoted_object")
    if optimization_goal == "OFFSITE_CONVERSIONS" or campaign.fields["objective"] == "OUTCOME_SALES":
        _check_promoted_pixel(call, account, promoted_object)
    targeting = params.json_object("targeting", required=True) or {}
    countries = _check_targeting(call, account, targeting)
    dsa = _dsa_fields(call, account, countries)
    fields = {
        "name": params.required_text("name"),
        "campaign_id": campaign.object_id,
        "daily_budget": budget,
        "billing_event": params.required_text("billing_event"),
        "optimization_goal": optimization_goal,
        "promoted_object": promoted_object,
        "targeting": targeting,
        **dsa,
        **_status_fields(call),
    }
    if _validate_only(call):
        return {"success": True}
    return {"id": _store(call, account, "adset", fields).object_id, "success": True}


@graph_endpoint(blueprint, "/act_<account_id>/adcreatives", ["POST"])
def create_creative(call: GraphCall, account_id: str) -> Payload:
    """Creative: ``object_story_spec.page_id`` must be a page of the user, the link an http(s) URL
    (1500, docs/platform-notes.md §6.5), and an app in development mode cannot create one (100/1885183)."""
    account = call.account(account_id, write=True, buc=BucType.ADS_MANAGEMENT)
    spec = call.params.json_object("object_story_spec", required=True) or {}
    page = call.state.world.pages.get(str(spec.get("page_id", "")))
    if page is None or call.user_id not in page.roles:
        raise errors.invalid_parameter(
            "object_story_spec.page_id must be a Page you can advertise for", blame="object_story_spec"
        )
    link_data = spec.get("link_data")
    if not isinstance(link_data, dict) or not _is_web_url(link_data.get("link")):
        raise errors.GraphError("(#1500) The url you supplied is invalid", 1500)
    if call.state.world.app.mode is AppMode.DEVELOPMENT:
        raise errors.GraphError(
            "Invalid parameter",
            100,
            1885183,
            user_title="Ads creative post was created by an app that is in development mode",
            user_msg="Ads creative post was created by an app that is in development mode. "
            "It must be in public to create this ad.",
        )
    fields = {
        "name": call.params.text("name", "Creative"),
        "object_story_spec": spec,
        "status": "ACTIVE",
        "effective_status": "ACTIVE",
    }
    if _validate_only(call):
        return {"success": True}
    return {"id": _store(call, account, "adcreative", fields).object_id}


@graph_endpoint(blueprint, "/act_<account_id>/ads", ["POST"])
def create_ad(call: GraphCall, account_id: str) -> Payload:
    """Ad: an ad set and creative of this account; an account without a payment method fails
    (100/1359188). New ads wait in review (``effective_status`` PENDING_REVIEW)."""
    account = call.account(account_id, write=True, buc=BucType.ADS_MANAGEMENT)
    params = call.params
    ad_set = _owned(call, account, params.required_text("adset_id"), "adset", "adset_id")
    creative_ref = params.json_object("creative", required=True) or {}
    creative = _owned(call, account, str(creative_ref.get("creative_id", "")), "adcreative", "creative")
    if account.funding_source is None:
        raise errors.invalid_parameter(
            "Update payment method: add a valid payment method to this ad account to run ads",
            subcode=1359188,
        )
    fields = {
        "name": params.required_text("name"),
        "adset_id": ad_set.object_id,
        "creative": {"id": creative.object_id},
        **_status_fields(call),
    }
    if fields["status"] == "ACTIVE":
        fields["effective_status"] = "PENDING_REVIEW"
    if _validate_only(call):
        return {"success": True}
    return {"id": _store(call, account, "ad", fields).object_id, "success": True}


@graph_endpoint(blueprint, "/act_<account_id>/<any(campaigns, adsets, adcreatives, ads):edge>", ["GET"])
def list_ad_objects(call: GraphCall, account_id: str, edge: str) -> Payload:
    call.account(account_id, write=False, buc=BucType.ADS_MANAGEMENT)
    kind = KINDS[edge]
    nodes = [
        ad_object_node(o)
        for o in call.state.world.ad_objects.values()
        if o.account_id == account_id and o.kind == kind
    ]
    return edge_page(nodes, call.params, node_type=kind)


def read_ad_object(call: GraphCall, ad_object: AdObject) -> Payload:
    """``GET /<id>`` of a campaign, ad set, creative or ad."""
    call.account(ad_object.account_id, write=False, buc=BucType.ADS_MANAGEMENT)
    return project(ad_object_node(ad_object), call.params, default=("name",), node_type=ad_object.kind)


def update_ad_object(call: GraphCall, ad_object: AdObject) -> Payload:
    """``POST /<id>``: what the advertiser changes in the ads manager, the fields given only:
    ``status`` (pause, activate, archive; a new ad goes to review when activated, ``effective_status``
    PENDING_REVIEW, docs/platform-notes.md §6.6), ``name``, and the budget of a campaign or ad set
    (``daily_budget``/``lifetime_budget`` in minor units, at least the account's minimum: 100/1885272).
    Nothing to change is code 100. A deleted object cannot be changed (100/33)."""
    account = call.account(ad_object.account_id, write=True, buc=BucType.ADS_MANAGEMENT)
    if ad_object.fields.get("status") == "DELETED":
        raise errors.unsupported_request("post", ad_object.object_id)
    params = call.params
    changes: dict[str, Any] = {}
    if params.has("status"):
        status = params.required_text("status")
        if status not in UPDATE_STATUSES:
            raise errors.invalid_parameter(f"status must be one of {sorted(UPDATE_STATUSES)}", blame="status")
        changes["status"] = status
    if params.has("name"):
        changes["name"] = params.required_text("name")
    for budget_field in ("daily_budget", "lifetime_budget"):
        if not params.has(budget_field):
            continue
        if ad_object.kind not in ("campaign", "adset"):
            raise errors.invalid_parameter(
                f"{budget_field} is not a field of an {ad_object.kind}", blame=budget_field
            )
        budget = params.integer(budget_field)
        if budget is None or budget < account.min_daily_budget:
            raise errors.invalid_parameter(
                f"Your budget is too low. The minimum daily budget is {account.min_daily_budget} "
                "in minor units",
                subcode=1885272,
                blame=budget_field,
            )
        changes[budget_field] = budget
    if not changes:
        raise errors.invalid_parameter("Nothing to update: give status, name or a budget")
    ad_object.fields.update(changes)
    if "status" in changes:
        status = changes["status"]
        review = ad_object.kind == "ad" and status == "ACTIVE"
        ad_object.fields["effective_status"] = "PENDING_REVIEW" if review else status
    ad_object.fields["updated_time"] = time.strftime("%Y-%m-%dT%H:%M:%S+0000", time.gmtime(call.now))
    return {"success": True}


def delete_ad_object(call: GraphCall, ad_object: AdObject) -> Payload:
    """``DELETE /<id>``: the object is kept with ``status`` DELETED and stops delivering."""
    call.account(ad_object.account_id, write=True, buc=BucType.ADS_MANAGEMENT)
    ad_object.fields["status"] = ad_object.fields["effective_status"] = "DELETED"
    return {"success": True}


def _validate_only(call: GraphCall) -> bool:
    options = call.params.json("execution_options") if call.params.has("execution_options") else None
    if options is not None and (not isinstance(options, list) or not set(options) <= {VALIDATE_ONLY}):
        raise errors.invalid_parameter(
            "execution_options must be a list of: validate_only", blame="execution_options"
        )
    return bool(options)


def _is_web_url(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    parts = urlsplit(value)
    return parts.scheme in ("http", "https") and bool(parts.hostname)


def _status_fields(call: GraphCall) -> dict[str, Any]:
    status = call.params.text("status", "PAUSED") or "PAUSED"
    if status not in CREATE_STATUSES:
        raise errors.invalid_parameter("status must be ACTIVE or PAUSED when creating", blame="status")
    return {"status": status, "effective_status": status}


def _store(call: GraphCall, account: AdAccount, kind: str, fields: dict[str, Any]) -> AdObject:
    world = call.state.world
    created = time.strftime("%Y-%m-%dT%H:%M:%S+0000", time.gmtime(call.now))
    ad_object = AdObject(world.new_id(), kind, account.account_id, {**fields, "created_time": created})
    world.ad_objects[ad_object.object_id] = ad_object
    return ad_object


def _owned(call: GraphCall, account: AdAccount, object_id: str, kind: str, param: str) -> AdObject:
    ad_object = call.state.world.ad_objects.get(object_id)
    if ad_object is None or ad_object.kind != kind or ad_object.account_id != account.account_id:
        raise errors.invalid_parameter(f"Param {param} is not a valid {kind} of this ad account", blame=param)
    return ad_object


def _check_promoted_pixel(
    call: GraphCall, account: AdAccount, promoted_object: dict[str, Any] | None
) -> None:
    pixel_ids = {pixel.pixel_id for pixel in call.state.world.pixels_of(account.account_id)}
    pixel_id = str((promoted_object or {}).get("pixel_id", ""))
    if pixel_id not in pixel_ids:
        detail = (
            "no pixel found for this ad account"
            if not pixel_ids
            else f"pixel {pixel_id} is not in this account"
        )
        raise errors.GraphError(
            "Invalid parameter",
            100,
            1349193,
            user_title="Select a promoted object for your ad set",
            user_msg=f"A conversion ad set needs a pixel of this ad account to promote: {detail}.",
            error_data={"blame_field_specs": [["promoted_object"]]},
        )
    if (promoted_object or {}).get("custom_event_type") not in CONVERSION_EVENTS:
        raise errors.invalid_parameter(
            "promoted_object.custom_event_type is invalid", blame="promoted_object"
        )


def _check_targeting(call: GraphCall, account: AdAccount, targeting: dict[str, Any]) -> set[str]:
    """The targeted countries, after checking geo, custom audiences and the advantage flag."""
    countries = set((targeting.get("geo_locations") or {}).get("countries") or [])
    if not countries:
        raise errors.invalid_parameter("targeting.geo_locations.countries is required", blame="targeting")
    audience_ids = [
        str(a["id"] if isinstance(a, dict) else a) for a in targeting.get("custom_audiences") or []
    ]
    for audience_id in audience_ids:
        audience = call.state.world.audiences.get(audience_id)
        if audience is None or audience.deleted or audience.account_id != account.account_id:
            raise errors.audience_not_shared(audience_id)
    if audience_ids and not account.tos_accepted:
        raise errors.terms_not_accepted(account.account_id)
    narrowed = audience_ids or any(key in targeting for key in ("age_min", "age_max", "genders"))
    advantage = (targeting.get("targeting_automation") or {}).get("advantage_audience")
    if narrowed and advantage not in (0, 1):
        raise errors.invalid_parameter(
            "Advantage audience flag required: set targeting_automation.advantage_audience to 0 or 1",
            subcode=1870227,
            blame="targeting",
        )
    return countries


def _dsa_fields(call: GraphCall, account: AdAccount, countries: set[str]) -> dict[str, Any]:
    if not countries & DSA_COUNTRIES:
        return {}
    beneficiary = call.params.text("dsa_beneficiary") or account.default_dsa_beneficiary
    payor = call.params.text("dsa_payor") or account.default_dsa_payor
    if beneficiary is None:
        raise _dsa_missing(
            "dsa_beneficiary", 3858081, "No payor/beneficiary provided in DSA regulated location"
        )
    if payor is None:
        raise _dsa_missing("dsa_payor", 3858079, "No payor provided in DSA regulated region")
    return {"dsa_beneficiary": beneficiary, "dsa_payor": payor}


def _dsa_missing(field: str, subcode: int, title: str) -> errors.GraphError:
    return errors.GraphError(
        "Invalid parameter",
        100,
        subcode,
        type="FacebookApiException",
        user_title=title,
        user_msg="Enter the person or organisation benefitting from the ads and the one paying for them.",
        error_data={"blame_field_specs": [[field]]},
    )
