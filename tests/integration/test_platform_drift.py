"""Drift from the platform's side: an audience deleted in the platform's ads manager (a DELETE by
the marketer on the Graph API, not by the service) is listed as deleted on the platform once the
service meets it (a refresh, a sync, or the scheduled check, which also finds adverts whose campaign,
ad set or ad were deleted there), refresh says why it cannot run, and deleting it in the service
succeeds (issue 25, item 2)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from local.connected import ConnectedOrg
from local.stack import LocalStack
from platform_sandbox.scenarios import PAGE_ID, PIXEL_ID, USER_ID
from tests.integration.test_audiences import body, users
from tests.integration.test_publishing import MarketerToken, advert, create_audience, ids_of, publish, read
from tests.integration.test_token_validation import SCHEDULED_EVENT


@pytest.fixture
def ads_manager(stack: LocalStack) -> Iterator[httpx.Client]:
    """The sandbox's Graph API as the marketer acting in the ads manager."""
    url = stack.sandbox.url
    with httpx.Client(base_url=f"{url}/v25.0", auth=MarketerToken(url)) as client:
        yield client


def deleted_in_ads_manager(api: httpx.Client, org: ConnectedOrg, ads_manager: httpx.Client) -> dict[str, Any]:
    """An active list audience whose platform audience the marketer then deleted by hand."""
    created = api.post("/platform-ads/audiences", json=body(150), headers=org.headers)
    assert created.status_code == 201, created.text
    audience: dict[str, Any] = created.json()
    assert ads_manager.delete(f"/{audience['platformCustomAudienceId']}").json() == {"success": True}
    return audience


def listed(api: httpx.Client, org: ConnectedOrg, audience_id: str) -> dict[str, Any]:
    audiences = api.get("/platform-ads/audiences", headers=org.headers).json()["audiences"]
    found: dict[str, Any] = next(a for a in audiences if a["audienceId"] == audience_id)
    return found


def test_a_refresh_of_an_audience_deleted_in_ads_manager_says_so_and_lists_it_as_deleted(
    api: httpx.Client, org: ConnectedOrg, ads_manager: httpx.Client
) -> None:
    # Given
    audience = deleted_in_ads_manager(api, org, ads_manager)
    path = f"/platform-ads/audiences/{audience['audienceId']}/refresh"
    # When its members are replaced
    refreshed = api.post(path, json={"users": users(10)}, headers=org.headers)
    # Then the answer says it was deleted on the platform and what to do
    assert refreshed.status_code == 409, refreshed.text
    assert "deleted on the platform" in refreshed.json()["message"]
    assert "snapshot" in refreshed.json()["error"]["remedy"]
    # And the list shows it as deleted on the platform, not active, with the same remedy
    shown = listed(api, org, audience["audienceId"])
    assert shown["status"] == "deleted_on_platform"
    assert shown["failure"]["code"] == "platform_audience_deleted"
    # And a second refresh answers the same without calling the platform
    again = api.post(path, json={"users": users(10)}, headers=org.headers)
    assert again.status_code == 409, again.text


def test_an_audience_deleted_in_ads_manager_is_deleted_in_the_service(
    api: httpx.Client, org: ConnectedOrg, ads_manager: httpx.Client
) -> None:
    # Given
    audience = deleted_in_ads_manager(api, org, ads_manager)
    # When it is deleted in the service
    path = f"/platform-ads/audiences/{audience['audienceId']}"
    deleted = api.delete(path, params={"confirm": "true"}, headers=org.headers)
    # Then it succeeds and the audience is no longer listed
    assert deleted.status_code == 204, deleted.text
    audiences = api.get("/platform-ads/audiences", headers=org.headers).json()["audiences"]
    assert audience["audienceId"] not in [a["audienceId"] for a in audiences]


def test_an_advert_whose_campaign_was_deleted_in_ads_manager_is_deleted_in_the_service(
    api: httpx.Client, org: ConnectedOrg, ads_manager: httpx.Client
) -> None:
    # Given a published advert whose campaign and ad the marketer deleted by hand
    audience = create_audience(api, org)
    published = publish(api, org, audience)
    assert published.status_code == 201, published.text
    ids = ids_of(published.json())
    for kind in ("ad", "campaign"):
        assert ads_manager.delete(f"/{ids[kind]}").json() == {"success": True}
    path = f"/platform-ads/audiences/{audience['audienceId']}"
    # When the advert, then the audience, are deleted in the service
    advert_deleted = api.delete(f"{path}/advert", params={"confirm": "true"}, headers=org.headers)
    audience_deleted = api.delete(path, params={"confirm": "true"}, headers=org.headers)
    # Then both succeed
    assert advert_deleted.status_code == 204, advert_deleted.text
    assert audience_deleted.status_code == 204, audience_deleted.text


def test_the_scheduled_check_shows_what_was_deleted_in_ads_manager_before_the_marketer_meets_it(
    stack: LocalStack, api: httpx.Client, org: ConnectedOrg, ads_manager: httpx.Client
) -> None:
    # Given: an audience the marketer deleted in the ads manager, and another whose published advert's
    # campaign they deleted there
    gone = deleted_in_ads_manager(api, org, ads_manager)
    advertised = create_audience(api, org)
    published = publish(api, org, advertised)
    assert published.status_code == 201, published.text
    assert ads_manager.delete(f"/{ids_of(published.json())['campaign']}").json() == {"success": True}
    # When the scheduled job runs (token validation, then the look for drift)
    assert stack.gateway is not None
    summary = stack.gateway.invoke("ValidateTokensFunction", SCHEDULED_EVENT)
    # Then the list shows both as deleted on the platform, with what to do, before any refresh or delete
    assert summary["drift"]["audiences_deleted"] >= 1
    assert summary["drift"]["adverts_deleted"] >= 1
    shown = listed(api, org, gone["audienceId"])
    assert shown["status"] == "deleted_on_platform"
    assert shown["failure"]["code"] == "platform_audience_deleted"
    advert = listed(api, org, advertised["audienceId"])["advert"]
    assert advert["state"] == "deleted_on_platform"
    assert advert["failure"]["code"] == "platform_advert_deleted"
    assert "campaign" in advert["failure"]["message"]
    assert "Delete the advert here" in advert["failure"]["remedy"]
    # And the actions that still make sense work: the advert, then its audience, are deleted
    path = f"/platform-ads/audiences/{advertised['audienceId']}"
    advert_deleted = api.delete(f"{path}/advert", params={"confirm": "true"}, headers=org.headers)
    assert advert_deleted.status_code == 204, advert_deleted.text
    assert api.delete(path, params={"confirm": "true"}, headers=org.headers).status_code == 204
    assert (
        api.delete(
            f"/platform-ads/audiences/{gone['audienceId']}", params={"confirm": "true"}, headers=org.headers
        ).status_code
        == 204
    )


# --- Changed on the platform's side: shown, never changed back ------------------------------------


def changes_of(shown: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(c["kind"], c["field"]): c for c in shown["platformChanges"]}


def test_what_the_marketer_changed_in_ads_manager_is_shown_by_the_scheduled_check_and_kept(
    stack: LocalStack,
    api: httpx.Client,
    org: ConnectedOrg,
    ads_manager: httpx.Client,
    sandbox: httpx.Client,
) -> None:
    # Given an audience with an active advert, which the marketer then changes in the ads manager:
    # the custom audience and the campaign renamed, the ad set's budget raised, the ad paused
    audience = create_audience(api, org)
    published = publish(api, org, audience, activate=True)
    assert published.status_code == 201, published.text
    ids = ids_of(published.json())
    changed = {
        audience["platformCustomAudienceId"]: {"name": "Renamed by the marketer"},
        ids["campaign"]: {"name": "Summer sale (edited)"},
        ids["adset"]: {"daily_budget": 5000},
        ids["ad"]: {"status": "PAUSED"},
    }
    for platform_id, fields in changed.items():
        assert ads_manager.post(f"/{platform_id}", data=fields).json() == {"success": True}
    sandbox.delete("/requests")
    # When the scheduled job runs
    assert stack.gateway is not None
    summary = stack.gateway.invoke("ValidateTokensFunction", SCHEDULED_EVENT)
    # Then the audience lists what changed on the platform's side, each with the platform's value and
    # the service's, and says the service keeps the platform's
    assert summary["drift"]["audiences_changed"] >= 1
    shown = listed(api, org, audience["audienceId"])
    assert shown["status"] == "active"
    assert shown["advert"]["state"] == "active"
    changes = changes_of(shown)
    assert set(changes) == {
        ("audience", "name"),
        ("campaign", "name"),
        ("adset", "daily_budget"),
        ("ad", "status"),
    }
    assert changes[("audience", "name")]["platformValue"] == "Renamed by the marketer"
    assert changes[("audience", "name")]["serviceValue"] == "Likely buyers"
    assert changes[("campaign", "name")]["platformValue"] == "Summer sale (edited)"
    assert (
        changes[("adset", "daily_budget")]["serviceValue"],
        changes[("adset", "daily_budget")]["platformValue"],
    ) == (
        "2000",
        "5000",
    )
    assert (changes[("ad", "status")]["serviceValue"], changes[("ad", "status")]["platformValue"]) == (
        "ACTIVE",
        "PAUSED",
    )
    assert "does not deliver while paused" in changes[("ad", "status")]["message"]
    assert all("does not change it back" in (c["remedy"] or "") for c in changes.values())
    # And nothing was written back to the platform: it still has the marketer's values
    writes = sandbox.get("/requests", params={"method": "POST"}).json()["requests"]
    assert [w["path"] for w in writes if any(i in w["path"] for i in changed)] == []
    assert read(ads_manager, ids["campaign"], "name")["name"] == "Summer sale (edited)"
    assert read(ads_manager, ids["adset"], "daily_budget")["daily_budget"] == 5000
    assert read(ads_manager, ids["ad"], "status")["status"] == "PAUSED"
    # And a second run finds the same changes, first seen when they were first seen
    stack.gateway.invoke("ValidateTokensFunction", SCHEDULED_EVENT)
    again = changes_of(listed(api, org, audience["audienceId"]))
    assert {k: c["seenAt"] for k, c in again.items()} == {k: c["seenAt"] for k, c in changes.items()}


def test_a_refresh_shows_a_rename_in_ads_manager_and_keeps_it(
    api: httpx.Client, org: ConnectedOrg, ads_manager: httpx.Client
) -> None:
    # Given an active list audience the marketer renamed in the ads manager
    created = api.post("/platform-ads/audiences", json=body(150), headers=org.headers)
    assert created.status_code == 201, created.text
    platform_id = created.json()["platformCustomAudienceId"]
    assert ads_manager.post(f"/{platform_id}", data={"name": "Renamed by hand"}).json() == {"success": True}
    # When its members are replaced
    path = f"/platform-ads/audiences/{created.json()['audienceId']}/refresh"
    refreshed = api.post(path, json={"users": users(120)}, headers=org.headers)
    # Then the refresh succeeds and says the audience was renamed on the platform
    assert refreshed.status_code == 200, refreshed.text
    [change] = refreshed.json()["platformChanges"]
    assert (change["kind"], change["field"], change["platformValue"]) == (
        "audience",
        "name",
        "Renamed by hand",
    )
    assert "renamed on the platform" in change["message"]
    [shown] = listed(api, org, created.json()["audienceId"])["platformChanges"]
    assert {k: v for k, v in shown.items() if k != "seenAt"} == {
        k: v for k, v in change.items() if k != "seenAt"
    }
    # And the platform keeps the marketer's name
    assert read(ads_manager, platform_id, "name")["name"] == "Renamed by hand"


def test_a_page_and_pixel_the_account_no_longer_has_are_shown_and_publishing_refuses_with_a_4xx(
    stack: LocalStack, api: httpx.Client, org: ConnectedOrg, sandbox: httpx.Client
) -> None:
    # Given a published advert, then the marketer's role on its Page removed and its pixel unlinked in
    # the business settings
    advertised = create_audience(api, org)
    published = publish(api, org, advertised)
    assert published.status_code == 201, published.text
    sandbox.delete(f"/pages/{PAGE_ID}/roles/{USER_ID}").raise_for_status()
    sandbox.delete(f"/pixels/{PIXEL_ID}").raise_for_status()
    # When the scheduled job runs
    assert stack.gateway is not None
    stack.gateway.invoke("ValidateTokensFunction", SCHEDULED_EVENT)
    # Then the advert's audience shows both, with what to do
    changes = changes_of(listed(api, org, advertised["audienceId"]))
    assert changes[("page", "access")]["platformId"] == PAGE_ID
    assert "can no longer be promoted" in changes[("page", "access")]["message"]
    assert "role on the Page" in changes[("page", "access")]["remedy"]
    assert changes[("pixel", "access")]["platformId"] == PIXEL_ID
    assert "Link the pixel" in changes[("pixel", "access")]["remedy"]
    # And the readiness checklist fails the Page and the pixel, each with its remedy
    items = {
        i["id"]: i
        for i in api.get(
            "/platform-ads/readiness", params={"publish": "true", "countries": "GB"}, headers=org.headers
        ).json()["items"]
    }
    assert items["page_promotable"]["status"] == "fail"
    assert "business settings" in items["page_promotable"]["remedy"]
    assert items["pixel_linked"]["status"] == "fail"
    # And publishing another advert is refused with a 4xx saying what to do, nothing created
    other = create_audience(api, org)
    before = len(sandbox.get("/state").json()["ad_objects"])
    refused = publish(api, org, other)
    assert refused.status_code == 422, refused.text
    assert refused.json()["error"]["remedy"]
    assert len(sandbox.get("/state").json()["ad_objects"]) == before


def test_a_page_lost_while_publishing_is_refused_with_a_4xx_not_the_platforms_error(
    api: httpx.Client, org: ConnectedOrg, sandbox: httpx.Client
) -> None:
    # Given a publish stopped by a platform failure on the ad set (its outcome unknown: nothing rolled
    # back, the repeat resumes), and the marketer's role on the Page removed meanwhile
    audience = create_audience(api, org)
    fault = {"kind": "error", "method": "POST", "path": "/adsets$", "code": 1, "http_status": 500}
    sandbox.post("/faults", json=fault).raise_for_status()
    path = f"/platform-ads/audiences/{audience['audienceId']}/advert"
    headers = {**org.headers, "Idempotency-Key": f"page-lost-{audience['audienceId']}"}
    assert api.post(path, json=advert(), headers=headers).status_code == 502
    sandbox.delete(f"/pages/{PAGE_ID}/roles/{USER_ID}").raise_for_status()
    # When the publish is repeated with its Idempotency-Key (the creative is posted as the Page)
    repeated = api.post(path, json=advert(), headers=headers)
    # Then it is refused with a 422 naming the Page and what to do, not the platform's 5xx
    assert repeated.status_code == 422, repeated.text
    assert repeated.json()["error"]["code"] == "platform_page_not_promotable"
    assert PAGE_ID in repeated.json()["message"]
    assert "role on the Page" in repeated.json()["error"]["remedy"]
    # And what the first attempt made (campaign, ad set) is rolled back: nothing left delivering
    ref = f"[{audience['audienceId'][:8]}]"
    mine = [o for o in sandbox.get("/state").json()["ad_objects"] if ref in (o["name"] or "")]
    assert {o["kind"] for o in mine} == {"campaign", "adset"}
    assert {o["status"] for o in mine} == {"DELETED"}
