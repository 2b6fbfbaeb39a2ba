"""The readiness checklist through the local stack: in the sandbox's default world every item
passes; in each item's scenario that item fails with its evidence and remedy, before anything is
created on the platform."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from local.connected import ConnectedOrg, connected_org
from local.seed import create_user, sign_in
from local.stack import LocalStack
from platform_sandbox.scenarios import BUSINESS_ACCOUNT_ID, USER_ID
from tests.integration.test_wizard import synced_and_trained

PUBLISH = {"publish": "true", "countries": "GB,US"}
PLATFORM_ITEMS = [
    "connection_active",
    "token_valid",
    "scopes_granted",
    "business_owned",
    "advertiser_role",
    "custom_audience_terms",
    "pixel_linked",
    "page_promotable",
    "payment_method",
    "beneficiary_payer",
    "app_live",
]


def readiness(api: httpx.Client, org: ConnectedOrg, **params: str) -> dict[str, dict[str, Any]]:
    response = api.get("/platform-ads/readiness", params={**PUBLISH, **params}, headers=org.headers)
    assert response.status_code == 200, response.text
    return {item["id"]: item for item in response.json()["items"]}


def nothing_created(sandbox: httpx.Client) -> None:
    state = sandbox.get("/state").json()
    assert state["audiences"] == []
    assert state["ad_objects"] == []
    methods = {entry["method"] for entry in sandbox.get("/requests").json()["requests"]}
    assert methods <= {"GET"}


def test_in_the_default_world_every_item_passes(
    stack: LocalStack, api: httpx.Client, sandbox: httpx.Client
) -> None:
    # Given: a fresh default world, and a connected organization whose shop is synced and both
    # models trained
    assert sandbox.post("/scenario", json={"name": "default"}).status_code == 200
    org = connected_org(stack, api)
    synced_and_trained(api, org)
    # and a purchase on the shop's site (the synthetic shop's orders are older than the pixel's window)
    site_purchase(api, org)
    sandbox.delete("/requests")

    # When: the checklist is read for retargeting with Publish advert
    items = readiness(api, org)

    # Then: every item passes, and reading it sent nothing but reads
    assert {name: item["status"] for name, item in items.items()} == dict.fromkeys(
        [*PLATFORM_ITEMS, "pixel_purchases", "model_fresh", "enough_users"], "pass"
    )
    assert "1 from the shop's pages" in items["pixel_purchases"]["evidence"]
    nothing_created(sandbox)


def site_purchase(api: httpx.Client, org: ConnectedOrg) -> None:
    """One purchase sent by the shop's page through the site events endpoint."""
    saved = api.post("/platform-ads/events/site", json={"domains": ["shop.example.com"]}, headers=org.headers)
    assert saved.status_code == 200, saved.text
    key = api.post("/platform-ads/events/site/key", headers=org.headers).json()["siteKey"]
    event = {
        "eventName": "Purchase",
        "eventId": f"order-{uuid.uuid4().hex[:8]}",
        "url": "https://shop.example.com/thanks",
        "customData": {"value": 20.0, "currency": "GBP"},
    }
    sent = api.post(
        "/site-events",
        params={"key": key},
        json={"events": [event]},
        headers={"Origin": "https://shop.example.com", "User-Agent": "Mozilla/5.0"},
    )
    assert sent.status_code == 200, sent.text


def test_a_pixel_without_purchases_in_the_last_7_days_fails_with_what_to_do(
    stack: LocalStack, api: httpx.Client, sandbox: httpx.Client
) -> None:
    # Given: a fresh default world (the pixel has fired nothing) and an organization that sent no purchase
    assert sandbox.post("/scenario", json={"name": "default"}).status_code == 200
    org = connected_org(stack, api)

    # When: the checklist is read with Publish advert
    item = readiness(api, org)["pixel_purchases"]

    # Then: the item fails, saying how to get purchases to the pixel
    assert item["status"] == "fail"
    assert "no purchase event" in item["evidence"]
    assert "Events page" in item["remedy"]


SCENARIOS = [
    ("advertiser_role", "analyst_role_only", "ANALYZE"),
    ("custom_audience_terms", "terms_not_accepted", "not accepted"),
    ("pixel_linked", "no_pixel", "No pixel"),
    ("payment_method", "no_payment_method", "no valid payment method"),
    ("app_live", "app_in_development_mode", "development mode"),
]


@pytest.mark.parametrize(("item", "scenario", "evidence"), SCENARIOS, ids=[s[0] for s in SCENARIOS])
def test_each_platform_scenario_fails_its_item(
    stack: LocalStack, api: httpx.Client, sandbox: httpx.Client, item: str, scenario: str, evidence: str
) -> None:
    # Given: the scenario's world, and an organization connected in it
    assert sandbox.post("/scenario", json={"name": scenario}).status_code == 200
    org = connected_org(stack, api)

    # When: the checklist is read
    items = readiness(api, org)

    # Then: that item fails with its evidence and remedy; the others of the platform pass
    assert items[item]["status"] == "fail"
    assert evidence in items[item]["evidence"]
    assert items[item]["remedy"]
    assert {k for k in PLATFORM_ITEMS if items[k]["status"] != "pass"} == {item}
    nothing_created(sandbox)


def test_an_account_that_left_its_business_fails_ownership_and_beneficiary(
    stack: LocalStack, api: httpx.Client, sandbox: httpx.Client
) -> None:
    # Given: a connected account that then leaves its business, with no DSA defaults
    org = connected_org(stack, api)
    change = {"business_name": None, "default_dsa_beneficiary": None, "default_dsa_payor": None}
    assert sandbox.patch(f"/ad_accounts/{BUSINESS_ACCOUNT_ID}", json=change).status_code == 200

    # When / Then: ownership fails, and so does the beneficiary for GB (not for US alone)
    items = readiness(api, org)
    assert items["business_owned"]["status"] == "fail"
    assert items["beneficiary_payer"]["status"] == "fail"
    assert "GB" in items["beneficiary_payer"]["evidence"]
    assert readiness(api, org, countries="US")["beneficiary_payer"]["status"] == "pass"


def test_a_removed_permission_fails_the_scopes(
    stack: LocalStack, api: httpx.Client, sandbox: httpx.Client
) -> None:
    # Given: the user removes business_management from the app in the platform's settings
    org = connected_org(stack, api)
    assert sandbox.delete(f"/users/{USER_ID}/permissions/business_management").status_code == 200

    # Then
    items = readiness(api, org)
    assert items["scopes_granted"]["status"] == "fail"
    assert items["scopes_granted"]["evidence"] == "Not granted: business_management."


def test_a_revoked_token_fails_and_the_account_checks_are_unknown(
    stack: LocalStack, api: httpx.Client, sandbox: httpx.Client
) -> None:
    # Given: a connection whose token the platform no longer accepts (the user changed their
    # password: error 190/460)
    org = connected_org(stack, api)
    with stack.sandbox.state.lock:
        for token in stack.sandbox.state.world.tokens.values():
            token.revoked_subcode = 460

    # Then: the token fails, and what needs it cannot be checked
    items = readiness(api, org)
    assert items["token_valid"]["status"] == "fail"
    assert items["token_valid"]["remedy"] == "Reconnect the ad account."
    assert items["business_owned"]["status"] == "unknown"
    assert items["app_live"]["status"] == "unknown"
    # And each says, in the dashboard's words, what it waits for
    assert items["business_owned"]["evidence"] == (
        "Not checked until “token valid” above passes: it needs that first."
    )


def test_without_a_connection_everything_on_the_platform_is_unknown(
    stack: LocalStack, api: httpx.Client
) -> None:
    org_id = f"org-{uuid.uuid4().hex[:8]}"
    _, password = create_user(stack, org_id, f"{org_id}@example.com")
    org = ConnectedOrg(
        org_id, {"Authorization": f"Bearer {sign_in(stack, f'{org_id}@example.com', password)}"}
    )
    items = readiness(api, org)
    assert items["connection_active"]["status"] == "fail"
    assert {items[k]["status"] for k in PLATFORM_ITEMS[1:]} == {"unknown"}
    assert {items[k]["evidence"] for k in PLATFORM_ITEMS[1:]} == {
        "Not checked until “connection active” above passes: it needs that first."
    }


def test_without_a_sync_the_data_items_fail(api: httpx.Client, org: ConnectedOrg) -> None:
    items = readiness(api, org)
    assert items["model_fresh"]["status"] == "fail"
    assert items["enough_users"]["status"] == "fail"
    assert "launch wizard's first step" in items["enough_users"]["remedy"]


def test_a_seed_short_of_100_in_the_lookalike_country_fails(api: httpx.Client, org: ConnectedOrg) -> None:
    # Given: a synced shop of 500 customers, fewer than 100 of them in any one country with an identifier
    synced_and_trained(api, org)

    # When: prospecting is checked for Australia
    items = readiness(api, org, objective="prospecting", lookalikeCountry="AU")

    # Then: the count is the evidence
    item = items["enough_users"]
    assert item["status"] == "fail", item
    assert "need" in item["evidence"]
