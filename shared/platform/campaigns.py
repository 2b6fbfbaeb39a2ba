"""Publish advert (docs/platform-notes.md §6): campaign, ad set, creative and ad, one request each.

Everything is created ``PAUSED`` by default; the caller activates once all four exist. The fields
newer API versions reject when absent are always sent explicitly: ``special_ad_categories``,
``is_adset_budget_sharing_enabled`` (v24) and ``targeting_automation.advantage_audience`` (v23).
"""

from __future__ import annotations

from collections.abc import Sequence

from shared.platform.audiences import CreatedObject
from shared.platform.client import GraphClient
from shared.platform.encoding import ad_account_node

PAUSED = "PAUSED"


def create_campaign(
    client: GraphClient,
    ad_account_id: str,
    name: str,
    *,
    status: str = PAUSED,
    special_ad_categories: Sequence[str] = (),
) -> CreatedObject:
    """Create a Sales (``OUTCOME_SALES``) campaign without a campaign budget (budgets live on ad sets)."""
    response = client.post(
        f"{ad_account_node(ad_account_id)}/campaigns",
        {
            "name": name,
            "objective": "OUTCOME_SALES",
            "status": status,
            "buying_type": "AUCTION",
            "special_ad_categories": list(special_ad_categories),
            "is_adset_budget_sharing_enabled": False,
        },
    )
    return CreatedObject.model_validate(response.body)


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
    """Create an ad set optimising for purchases on ``pixel_id``, targeting ``audience_id`` in ``countries``.

    ``daily_budget_minor_units`` is in the account currency's minor units (cents for USD). The DSA
    beneficiary and payor are only needed for EU-like regions; when None the account defaults apply.
    """
    response = client.post(
        f"{ad_account_node(ad_account_id)}/adsets",
        {
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
            "dsa_beneficiary": dsa_beneficiary,
            "dsa_payor": dsa_payor,
        },
    )
    return CreatedObject.model_validate(response.body)


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
    """Create a link-ad creative posted as ``page_id`` pointing at ``link``."""
    link_data = {
        "link": link,
        "message": message,
        "name": headline,
        "call_to_action": {"type": call_to_action, "value": {"link": link}},
    }
    if image_url is not None:
        link_data["picture"] = image_url
    response = client.post(
        f"{ad_account_node(ad_account_id)}/adcreatives",
        {"name": name, "object_story_spec": {"page_id": page_id, "link_data": link_data}},
    )
    return CreatedObject.model_validate(response.body)


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
    response = client.post(
        f"{ad_account_node(ad_account_id)}/ads",
        {"name": name, "adset_id": adset_id, "creative": {"creative_id": creative_id}, "status": status},
    )
    return CreatedObject.model_validate(response.body)
