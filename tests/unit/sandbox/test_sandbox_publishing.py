"""Publishing a conversion campaign: campaign, ad set, creative, ad (docs/platform-notes.md §6)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from platform_sandbox import SandboxState
from platform_sandbox.scenarios import BUSINESS_ACCOUNT_ID, PAGE_ID, PIXEL_ID
from tests.unit.sandbox.samples import ACCOUNT, error_of

Graph = Callable[..., TestResponse]


def campaign_form(**changes: Any) -> dict[str, Any]:
    form = {
        "name": "Sales - predicted buyers",
        "objective": "OUTCOME_SALES",
        "status": "PAUSED",
        "special_ad_categories": "[]",
        "is_adset_budget_sharing_enabled": "false",
    }
    return {**form, **changes}


def ad_set_form(campaign_id: str, audience_id: str | None = None, **targeting_changes: Any) -> dict[str, Any]:
    targeting: dict[str, Any] = {
        "geo_locations": {"countries": ["GB"]},
        "targeting_automation": {"advantage_audience": 0},
        **targeting_changes,
    }
    if audience_id is not None:
        targeting["custom_audiences"] = [{"id": audience_id}]
    return {
        "name": "Buyers GB",
        "campaign_id": campaign_id,
        "daily_budget": "2000",
        "billing_event": "IMPRESSIONS",
        "optimization_goal": "OFFSITE_CONVERSIONS",
        "promoted_object": json.dumps({"pixel_id": PIXEL_ID, "custom_event_type": "PURCHASE"}),
        "targeting": json.dumps(targeting),
    }


def creative_form() -> dict[str, Any]:
    spec = {"page_id": PAGE_ID, "link_data": {"link": "https://shop.example.com/p/1", "message": "New in"}}
    return {"name": "Creative", "object_story_spec": json.dumps(spec)}


def created_id(response: TestResponse) -> str:
    assert response.status_code == 200, response.get_json()
    object_id: str = response.get_json()["id"]
    return object_id


@pytest.fixture
def campaign(graph: Graph) -> str:
    return created_id(graph("POST", f"/{ACCOUNT}/campaigns", data=campaign_form()))


def test_full_chain_publishes_an_ad_pending_review(
    graph: Graph, campaign: str, new_audience: Callable[..., str]
) -> None:
    # Given a campaign, an ad set targeting an audience of the account, and a creative
    ad_set = created_id(graph("POST", f"/{ACCOUNT}/adsets", data=ad_set_form(campaign, new_audience())))
    creative = created_id(graph("POST", f"/{ACCOUNT}/adcreatives", data=creative_form()))
    # When the ad is created active
    form = {
        "name": "Ad",
        "adset_id": ad_set,
        "creative": json.dumps({"creative_id": creative}),
        "status": "ACTIVE",
    }
    response = graph("POST", f"/{ACCOUNT}/ads", data=form)
    # Then it exists and waits in review
    ad = graph("GET", f"/{created_id(response)}?fields=adset_id,effective_status").get_json()
    assert ad["adset_id"] == ad_set
    assert ad["effective_status"] == "PENDING_REVIEW"


def test_campaign_without_budget_needs_budget_sharing_flag(graph: Graph) -> None:
    # When a campaign without budget leaves out is_adset_budget_sharing_enabled
    form = {k: v for k, v in campaign_form().items() if k != "is_adset_budget_sharing_enabled"}
    response = graph("POST", f"/{ACCOUNT}/campaigns", data=form)
    # Then v24+ requires the flag
    assert error_of(response)["error_subcode"] == 4834011


def test_campaign_needs_special_ad_categories(graph: Graph) -> None:
    # When special_ad_categories is left out
    form = {k: v for k, v in campaign_form().items() if k != "special_ad_categories"}
    response = graph("POST", f"/{ACCOUNT}/campaigns", data=form)
    # Then it is a required parameter
    assert "special_ad_categories is required" in error_of(response)["message"]


def test_ad_set_without_pixel_asks_for_a_promoted_object(
    graph: Graph, state: SandboxState, campaign: str
) -> None:
    # Given the account's pixel is gone
    state.world.pixels.clear()
    # When a conversion ad set is created
    response = graph("POST", f"/{ACCOUNT}/adsets", data=ad_set_form(campaign))
    # Then the platform asks for a promoted object and says no pixel was found
    error = error_of(response)
    assert (error["code"], error["error_subcode"]) == (100, 1349193)
    assert error["error_user_title"] == "Select a promoted object for your ad set"
    assert "no pixel found for this ad account" in error["error_user_msg"]


def test_ad_set_with_audience_needs_advantage_flag(
    graph: Graph, campaign: str, new_audience: Callable[..., str]
) -> None:
    # When an ad set targets a custom audience without the advantage_audience flag
    form = ad_set_form(campaign, new_audience(), targeting_automation={})
    response = graph("POST", f"/{ACCOUNT}/adsets", data=form)
    # Then the flag is required
    assert error_of(response)["error_subcode"] == 1870227


def test_ad_set_with_foreign_audience_fails_1487301(graph: Graph, campaign: str) -> None:
    # When an ad set targets an audience that is not in the account
    response = graph("POST", f"/{ACCOUNT}/adsets", data=ad_set_form(campaign, "999"))
    # Then the audience is unavailable to the account
    assert error_of(response)["code"] == 1487301


def test_eu_ad_set_without_beneficiary_fails_3858081(
    graph: Graph, state: SandboxState, campaign: str
) -> None:
    # Given an account without default DSA beneficiary and payer
    account = state.world.accounts[BUSINESS_ACCOUNT_ID]
    account.default_dsa_beneficiary = account.default_dsa_payor = None
    # When an ad set targets France without naming them
    form = ad_set_form(campaign, geo_locations={"countries": ["FR"]})
    response = graph("POST", f"/{ACCOUNT}/adsets", data=form)
    # Then the beneficiary is missing
    error = error_of(response)
    assert (error["code"], error["error_subcode"]) == (100, 3858081)
    assert error["error_data"] == {"blame_field_specs": [["dsa_beneficiary"]]}


def test_development_mode_app_cannot_create_creatives(
    graph: Graph, use_scenario: Callable[[str], None]
) -> None:
    # Given an app in development mode
    use_scenario("app_in_development_mode")
    # When a creative is created
    response = graph("POST", f"/{ACCOUNT}/adcreatives", data=creative_form())
    # Then the documented development-mode error comes back
    error = error_of(response)
    assert (error["code"], error["error_subcode"]) == (100, 1885183)
    assert error["error_user_title"] == "Ads creative post was created by an app that is in development mode"


def test_ad_without_payment_method_fails_1359188(graph: Graph, use_scenario: Callable[[str], None]) -> None:
    # Given an account without a payment method, and an ad set and creative in it
    use_scenario("no_payment_method")
    campaign = created_id(graph("POST", f"/{ACCOUNT}/campaigns", data=campaign_form()))
    ad_set = created_id(graph("POST", f"/{ACCOUNT}/adsets", data=ad_set_form(campaign)))
    creative = created_id(graph("POST", f"/{ACCOUNT}/adcreatives", data=creative_form()))
    # When the ad is created
    form = {"name": "Ad", "adset_id": ad_set, "creative": json.dumps({"creative_id": creative})}
    response = graph("POST", f"/{ACCOUNT}/ads", data=form)
    # Then the platform asks for a payment method
    assert (error_of(response)["code"], error_of(response)["error_subcode"]) == (100, 1359188)


def test_validate_only_checks_everything_and_creates_nothing(
    graph: Graph, state: SandboxState, use_scenario: Callable[[str], None]
) -> None:
    # Given an app in development mode
    use_scenario("app_in_development_mode")
    options = {"execution_options": json.dumps(["validate_only"])}
    # When a campaign and a creative are only validated
    campaign = graph("POST", f"/{ACCOUNT}/campaigns", data={**campaign_form(), **options})
    creative = graph("POST", f"/{ACCOUNT}/adcreatives", data={**creative_form(), **options})
    # Then the campaign passes without an id, the creative fails as a real create would, nothing exists
    assert campaign.get_json() == {"success": True}
    assert (error_of(creative)["code"], error_of(creative)["error_subcode"]) == (100, 1885183)
    assert state.world.ad_objects == {}


def test_a_creative_link_must_be_a_web_address(graph: Graph) -> None:
    # When the link is not an http(s) URL
    spec = {"page_id": PAGE_ID, "link_data": {"link": "javascript:alert(1)", "message": "New in"}}
    response = graph("POST", f"/{ACCOUNT}/adcreatives", data={"object_story_spec": json.dumps(spec)})
    # Then the platform says the URL is invalid
    assert error_of(response)["code"] == 1500


def test_activating_an_ad_sends_it_to_review(
    graph: Graph, campaign: str, new_audience: Callable[..., str]
) -> None:
    # Given a paused ad
    ad_set = created_id(graph("POST", f"/{ACCOUNT}/adsets", data=ad_set_form(campaign, new_audience())))
    creative = created_id(graph("POST", f"/{ACCOUNT}/adcreatives", data=creative_form()))
    form = {"name": "Ad", "adset_id": ad_set, "creative": json.dumps({"creative_id": creative})}
    ad = created_id(graph("POST", f"/{ACCOUNT}/ads", data=form))
    # When it is activated
    response = graph("POST", f"/{ad}", data={"status": "ACTIVE"})
    # Then the update succeeds and the ad waits in review
    assert response.get_json() == {"success": True}
    read = graph("GET", f"/{ad}?fields=status,effective_status").get_json()
    assert (read["status"], read["effective_status"]) == ("ACTIVE", "PENDING_REVIEW")


def test_a_deleted_campaign_stays_readable_as_deleted(graph: Graph, campaign: str) -> None:
    # When the campaign is deleted
    response = graph("DELETE", f"/{campaign}")
    # Then it answers success and reads back DELETED; it can no longer be activated
    assert response.get_json() == {"success": True}
    assert graph("GET", f"/{campaign}?fields=status").get_json()["status"] == "DELETED"
    assert error_of(graph("POST", f"/{campaign}", data={"status": "ACTIVE"}))["code"] == 100


def test_admin_can_change_an_ad_account_in_place(client: FlaskClient, state: SandboxState) -> None:
    # When the account leaves its business and loses its DSA defaults
    response = client.patch(
        f"/_admin/ad_accounts/{ACCOUNT}",
        json={"business_name": None, "default_dsa_beneficiary": None, "currency": "JPY"},
    )
    # Then only those fields changed
    assert response.status_code == 200
    account = state.world.accounts[BUSINESS_ACCOUNT_ID]
    assert (account.business, account.default_dsa_beneficiary, account.currency) == (None, None, "JPY")
    assert account.default_dsa_payor == "Sandbox Shop Ltd"


def test_a_lost_answer_creates_the_object_but_answers_a_transient_500(
    graph: Graph, client: FlaskClient, state: SandboxState
) -> None:
    # Given the next campaign create loses its answer
    client.post("/_admin/faults", json={"kind": "lost_answer", "path": "/campaigns$"})
    # When a campaign is created
    response = graph("POST", f"/{ACCOUNT}/campaigns", data=campaign_form())
    # Then the caller sees a transient server error, yet the campaign exists with its creation time
    assert response.status_code == 500
    assert (error_of(response)["code"], error_of(response)["is_transient"]) == (2, True)
    [created] = state.world.ad_objects.values()
    listed = graph("GET", f"/{ACCOUNT}/campaigns?fields=name,status,created_time").get_json()["data"]
    assert listed == [
        {
            "id": created.object_id,
            "name": "Sales - predicted buyers",
            "status": "PAUSED",
            "created_time": created.fields["created_time"],
        }
    ]


def test_an_unknown_special_ad_category_is_refused(graph: Graph) -> None:
    # When a campaign declares a category the platform does not have
    response = graph("POST", f"/{ACCOUNT}/campaigns", data=campaign_form(special_ad_categories='["TOYS"]'))
    # Then the parameter is invalid
    assert error_of(response)["code"] == 100
    assert error_of(response)["error_data"] == {"blame_field_specs": [["special_ad_categories"]]}
