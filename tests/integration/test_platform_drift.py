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
from tests.integration.test_audiences import body, users
from tests.integration.test_publishing import MarketerToken, create_audience, ids_of, publish
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
