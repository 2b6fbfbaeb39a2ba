"""Publish advert (docs/platform-notes.md §6): campaign, ad set, creative and ad, one request each.

Everything is created ``PAUSED`` by default; the caller activates once all four exist. The fields
newer API versions reject when absent are always sent explicitly: ``special_ad_categories``,
``is_adset_budget_sharing_enabled`` (v24) and ``targeting_automation.advantage_audience`` (v23).

The ``*_params`` functions build the exact form of each create, so a caller can show (dry run) or
store (resumable publishing) what will be sent before sending it with ``create_object``.
``validate_object`` sends the same form with ``execution_options=["validate_only"]``: the platform
runs its validation rules and creates nothing (Marketing API "execution_options").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from shared.platform.audiences import CreatedObject
from shared.platform.client import GraphClient
from shared.platform.encoding import ad_account_node
from shared.platform.errors import PlatformError, object_gone

PAUSED = "PAUSED"
ACTIVE = "ACTIVE"
Edge = Literal["campaigns", "adsets", "adcreatives", "ads"]
Params = dict[str, Any]


def campaign_params(name: str, *, status: str = PAUSED, special_ad_categories: Sequence[str] = ()) -> Params:
    """A Sales (``OUTCOME_SALES``) campaign without a campaign budget (budgets live on ad sets)."""
    return {
        "name": name,
        "objective": "OUTCOME_SALES",
        "status": status,
        "buying_type": "AUCTION",
        "special_ad_categories": list(special_ad_categories),
        "is_adset_budget_sharing_enabled": False,
    }


def adset_params(
    *,
    name: str,
    campaign_id: str,
    audience_id: str,
    pixel_id: str,
    countries: Sequence[str],
    daily_budget_minor_units: int,
    status: str = PAUSED,
    advantage_audience: bool = False,
    dsa_beneficiary: str | None = None,
    dsa_payor: str | None = None,
) -> Params:
    """An ad set optimising for purchases on ``pixel_id``, targeting ``audience_id`` in ``countries``.

    ``daily_budget_minor_units`` is in the account currency's minor units (cents for USD). The DSA
    beneficiary and payor are only needed for regulated regions; None leaves them out, so the
    account's defaults apply (docs/platform-notes.md §6.3).
    """
    params: Params = {
        "name": name,
        "campaign_id": campaign_id,
        "status": status,
        "daily_budget": daily_budget_minor_units,
        "billing_event": "IMPRESSIONS",
        "optimization_goal": "OFFSITE_CONVERSIONS",
        "bid_strategy": "LOWEST_COST_WITHOUT_CAP",
        "promoted_object": {"pixel_id": pixel_id, "custom_event_type": "PURCHASE"},
        "targeting": {
            "geo_locations": {"countries": [country.upper() for country in countries]},
            "custom_audiences": [{"id": audience_id}],
            "targeting_automation": {"advantage_audience": int(advantage_audience)},
        },
    }
    if dsa_beneficiary is not None:
        params["dsa_beneficiary"] = dsa_beneficiary
    if dsa_payor is not None:
        params["dsa_payor"] = dsa_payor
    return params


def creative_params(
    *,
    name: str,
    page_id: str,
    link: str,
    message: str,
    headline: str,
    description: str | None = None,
    image_url: str | None = None,
    call_to_action: str = "SHOP_NOW",
) -> Params:
    """A link-ad creative posted as ``page_id`` pointing at ``link``."""
    link_data: Params = {
        "link": link,
        "name": headline,
        "call_to_action": {"type": call_to_action, "value": {"link": link}},
    }
    if message:
        link_data["message"] = message
    if description is not None:
        link_data["description"] = description
    if image_url is not None:
        link_data["picture"] = image_url
    return {"name": name, "object_story_spec": {"page_id": page_id, "link_data": link_data}}


def ad_params(*, name: str, adset_id: str, creative_id: str, status: str = PAUSED) -> Params:
    """The ad joining an ad set and a creative."""
    return {"name": name, "adset_id": adset_id, "creative": {"creative_id": creative_id}, "status": status}


def create_object(client: GraphClient, ad_account_id: str, edge: Edge, params: Mapping[str, Any]) -> str:
    """Create one object on the ad account's ``edge``; returns its id."""
    response = client.post(f"{ad_account_node(ad_account_id)}/{edge}", params)
    return CreatedObject.model_validate(response.body).id


def validate_object(client: GraphClient, ad_account_id: str, edge: Edge, params: Mapping[str, Any]) -> None:
    """Run the platform's validation of a create without creating anything; raises what the create
    would raise (for instance ``DevelopmentModeCreative`` for a creative of a development-mode app)."""
    client.post(
        f"{ad_account_node(ad_account_id)}/{edge}",
        {**params, "execution_options": ["validate_only"]},
        idempotent=True,
    )


class AdObjectSummary(BaseModel):
    """An object as listed on an ad account's edge: enough to recognise one this service created."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    id: str
    name: str = ""
    status: str | None = None
    created_time: datetime | None = None


def list_objects(
    client: GraphClient, ad_account_id: str, edge: Edge, *, name: str | None = None
) -> list[AdObjectSummary]:
    """Every object on the ad account's ``edge`` (only those called ``name`` when given, filtered by
    the platform: docs/platform-notes.md §2.4) with its name, status and creation time."""
    path = f"{ad_account_node(ad_account_id)}/{edge}"
    query: dict[str, Any] = {"fields": "name,status,created_time"}
    if name is not None:
        query["filtering"] = [{"field": "name", "operator": "EQUAL", "value": name}]
    return [AdObjectSummary.model_validate(node) for node in client.iterate(path, query)]


def read_status(client: GraphClient, object_id: str) -> str | None:
    """A campaign's, ad set's or ad's ``effective_status`` (``status`` when the platform gives no
    effective one), or None when the platform says the object no longer exists (100/33). A deleted
    object may stay readable for a while with ``DELETED`` (docs/platform-notes.md §6.7)."""
    try:
        body = client.get(object_id, {"fields": "status,effective_status"}).body
    except PlatformError as exc:
        if object_gone(exc):
            return None
        raise
    status = body.get("effective_status") or body.get("status")
    return str(status) if status is not None else None


def read_object(client: GraphClient, object_id: str, fields: str) -> dict[str, Any] | None:
    """A campaign's, ad set's or ad's ``fields`` as the platform has them now, or None when it says
    the object no longer exists (100/33)."""
    try:
        return dict(client.get(object_id, {"fields": fields}).body)
    except PlatformError as exc:
        if object_gone(exc):
            return None
        raise


def set_status(client: GraphClient, object_id: str, status: str) -> None:
    """Pause or activate a campaign, ad set or ad (``POST /<id>``; setting a status is idempotent)."""
    client.post(object_id, {"status": status}, idempotent=True)


def delete_object(client: GraphClient, object_id: str) -> None:
    """Delete a campaign, ad set, creative or ad (``DELETE /<id>``)."""
    client.delete(object_id)


def create_campaign(
    client: GraphClient,
    ad_account_id: str,
    name: str,
    *,
    status: str = PAUSED,
    special_ad_categories: Sequence[str] = (),
) -> CreatedObject:
    """Create a Sales campaign (see ``campaign_params``)."""
    params = campaign_params(name, status=status, special_ad_categories=special_ad_categories)
    return CreatedObject(id=create_object(client, ad_account_id, "campaigns", params))


def create_adset(
    client: GraphClient,
    ad_account_id: str,
    *,
    name: str,
    campaign_id: str,
    audience_id: str,
    pixel_id: str,
    countries: Sequence[str],
    daily_budget_minor_units: int,
    status: str = PAUSED,
    advantage_audience: bool = False,
    dsa_beneficiary: str | None = None,
    dsa_payor: str | None = None,
) -> CreatedObject:
    """Create a purchase-optimised ad set (see ``adset_params``)."""
    params = adset_params(
        name=name,
        campaign_id=campaign_id,
        audience_id=audience_id,
        pixel_id=pixel_id,
        countries=countries,
        daily_budget_minor_units=daily_budget_minor_units,
        status=status,
        advantage_audience=advantage_audience,
        dsa_beneficiary=dsa_beneficiary,
        dsa_payor=dsa_payor,
    )
    return CreatedObject(id=create_object(client, ad_account_id, "adsets", params))


def create_creative(
    client: GraphClient,
    ad_account_id: str,
    *,
    name: str,
    page_id: str,
    link: str,
    message: str,
    headline: str,
    image_url: str | None = None,
    call_to_action: str = "SHOP_NOW",
) -> CreatedObject:
    """Create a link-ad creative (see ``creative_params``)."""
    params = creative_params(
        name=name,
        page_id=page_id,
        link=link,
        message=message,
        headline=headline,
        image_url=image_url,
        call_to_action=call_to_action,
    )
    return CreatedObject(id=create_object(client, ad_account_id, "adcreatives", params))


def create_ad(
    client: GraphClient,
    ad_account_id: str,
    *,
    name: str,
    adset_id: str,
    creative_id: str,
    status: str = PAUSED,
) -> CreatedObject:
    """Create the ad joining an ad set and a creative. Raises ``PaymentMethodRequired`` without billing."""
    params = ad_params(name=name, adset_id=adset_id, creative_id=creative_id, status=status)
    return CreatedObject(id=create_object(client, ad_account_id, "ads", params))
