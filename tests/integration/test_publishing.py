"""Publish advert end to end: the API, the publishing library and the platform sandbox over HTTP.

Each test reads back from the sandbox what the service created (or must have cleaned up): the
service's answer alone proves nothing about what is left on the platform.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from local.connected import ConnectedOrg, connected_org
from local.payments_browser import connect_payments
from local.stack import LocalStack
from platform_sandbox.scenarios import BUSINESS_ACCOUNT_ID, PAGE_ID, PIXEL_ID
from shared import wiring
from shared.publishing.models import PublishAdvertRequest
from shared.targeting.models import SegmentSpec
from tests.integration.payments_shop import sync_products
from tests.integration.test_wizard import SEGMENT, synced_and_trained

ACCOUNT = f"act_{BUSINESS_ACCOUNT_ID}"


def users(count: int) -> list[dict[str, Any]]:
    return [
        {"user_id": f"u{i}", "email": f"buyer{i}@example.com", "score": 0.9, "country": "GB"}
        for i in range(count)
    ]


def advert(**overrides: Any) -> dict[str, Any]:
    return {
        "campaignName": "Spring sale",
        "dailyBudget": "20.00",
        "headline": "Back in stock",
        "description": "Free delivery this week",
        "message": "The trainers you looked at are back.",
        "destinationUrl": "https://shop.example.com/products/sku-1?ref=ads",
        **overrides,
    }


def create_audience(api: httpx.Client, org: ConnectedOrg, objective: str = "prospecting") -> dict[str, Any]:
    body: dict[str, Any] = {"name": "Likely buyers", "productId": "sku-1", "users": users(150)}
    if objective == "prospecting":
        body |= {"objective": "prospecting", "lookalikeSize": 2, "lookalikeCountry": "GB"}
    response = api.post("/platform-ads/audiences", json=body, headers=org.headers)
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


class MarketerToken(httpx.Auth):
    """A token minted for each request, so a scenario loaded during the test cannot invalidate it."""

    def __init__(self, sandbox_url: str) -> None:
        self.sandbox_url = sandbox_url

    def auth_flow(self, request: httpx.Request) -> Iterator[httpx.Request]:
        token = httpx.post(f"{self.sandbox_url}/_admin/tokens", json={}).json()["access_token"]
        request.headers["Authorization"] = f"Bearer {token}"
        yield request


@pytest.fixture
def graph(stack: LocalStack) -> Iterator[httpx.Client]:
    """The sandbox's Graph API as the marketer, to read objects back."""
    url = stack.sandbox.url
    with httpx.Client(base_url=f"{url}/v25.0", auth=MarketerToken(url)) as client:
        yield client


def read(graph: httpx.Client, object_id: str, fields: str) -> dict[str, Any]:
    response = graph.get(f"/{object_id}", params={"fields": fields})
    assert response.status_code == 200, response.text
    node: dict[str, Any] = response.json()
    return node


def ad_objects(sandbox: httpx.Client) -> list[dict[str, Any]]:
    objects: list[dict[str, Any]] = sandbox.get("/state").json()["ad_objects"]
    return objects


def live_objects(sandbox: httpx.Client) -> list[dict[str, Any]]:
    return [o for o in ad_objects(sandbox) if o["status"] != "DELETED"]


def ids_of(published: dict[str, Any]) -> dict[str, str]:
    return {o["kind"]: o["platformId"] for o in published["objects"]}


def test_an_advert_for_a_prospecting_audience_is_created_paused_with_every_parameter(
    api: httpx.Client, org: ConnectedOrg, graph: httpx.Client
) -> None:
    # Given an active prospecting audience with its GB lookalike
    audience = create_audience(api, org)
    lookalike_id = audience["lookalike"]["platformAudienceId"]
    # When the advert is published
    response = api.post(
        f"/platform-ads/audiences/{audience['audienceId']}/advert", json=advert(), headers=org.headers
    )
    # Then campaign, ad set, creative and ad exist, paused, with the parameters of docs/platform-notes.md §6
    assert response.status_code == 201, response.text
    published = response.json()
    assert published["state"] == "paused"
    ids = ids_of(published)
    campaign = read(
        graph, ids["campaign"], "name,objective,status,special_ad_categories,is_adset_budget_sharing_enabled"
    )
    assert campaign == {
        "id": ids["campaign"],
        "name": f"Spring sale [{audience['audienceId'][:8]}]",  # names carry the audience's reference
        "objective": "OUTCOME_SALES",
        "status": "PAUSED",
        "special_ad_categories": [],
        "is_adset_budget_sharing_enabled": False,
    }
    ad_set = read(
        graph,
        ids["adset"],
        "campaign_id,status,daily_budget,optimization_goal,billing_event,promoted_object,targeting,"
        "dsa_beneficiary,dsa_payor",
    )
    assert ad_set["campaign_id"] == ids["campaign"]
    assert ad_set["status"] == "PAUSED"
    assert ad_set["daily_budget"] == 2000  # GBP 20.00 in pence (offset 100)
    assert (ad_set["optimization_goal"], ad_set["billing_event"]) == ("OFFSITE_CONVERSIONS", "IMPRESSIONS")
    assert ad_set["promoted_object"] == {"pixel_id": PIXEL_ID, "custom_event_type": "PURCHASE"}
    assert ad_set["targeting"] == {
        "geo_locations": {"countries": ["GB"]},
        "custom_audiences": [{"id": lookalike_id}],
        "targeting_automation": {"advantage_audience": 0},
    }
    assert (ad_set["dsa_beneficiary"], ad_set["dsa_payor"]) == ("Sandbox Shop Ltd", "Sandbox Shop Ltd")
    creative = read(graph, ids["adcreative"], "object_story_spec")["object_story_spec"]
    assert creative["page_id"] == PAGE_ID
    link_data = creative["link_data"]
    assert (link_data["name"], link_data["description"]) == ("Back in stock", "Free delivery this week")
    assert link_data["message"] == "The trainers you looked at are back."
    assert link_data["call_to_action"] == {"type": "SHOP_NOW", "value": {"link": link_data["link"]}}
    link = urlsplit(link_data["link"])
    assert (link.netloc, link.path) == ("shop.example.com", "/products/sku-1")
    assert parse_qs(link.query) == {
        "ref": ["ads"],
        "utm_source": ["meta"],
        "utm_medium": ["paid_social"],
        "utm_campaign": ["Spring sale"],
        "utm_content": ["Likely buyers"],
    }
    ad = read(graph, ids["ad"], "adset_id,creative,status")
    assert (ad["adset_id"], ad["creative"], ad["status"]) == (
        ids["adset"],
        {"id": ids["adcreative"]},
        "PAUSED",
    )
    # And the audiences list shows the ids
    listed = api.get("/platform-ads/audiences", headers=org.headers).json()["audiences"]
    shown = next(a for a in listed if a["audienceId"] == audience["audienceId"])
    assert shown["advert"]["state"] == "paused"
    assert {o["kind"]: o["platformId"] for o in shown["advert"]["objects"]} == ids


def test_an_advert_is_activated_only_when_asked(
    api: httpx.Client, org: ConnectedOrg, graph: httpx.Client
) -> None:
    # Given an active retargeting audience of GB customers
    audience = create_audience(api, org, objective="retargeting")
    # When the advert is published with activate
    response = api.post(
        f"/platform-ads/audiences/{audience['audienceId']}/advert",
        json=advert(activate=True),
        headers=org.headers,
    )
    # Then every object is active (the ad waits in review) and targets the customers' country
    assert response.status_code == 201, response.text
    ids = ids_of(response.json())
    assert read(graph, ids["campaign"], "status")["status"] == "ACTIVE"
    ad_set = read(graph, ids["adset"], "status,targeting")
    assert ad_set["status"] == "ACTIVE"
    assert ad_set["targeting"]["custom_audiences"] == [{"id": audience["platformCustomAudienceId"]}]
    assert ad_set["targeting"]["geo_locations"] == {"countries": ["GB"]}
    assert read(graph, ids["ad"], "effective_status")["effective_status"] == "PENDING_REVIEW"


def test_a_dry_run_returns_the_exact_plan_and_creates_nothing(
    api: httpx.Client, org: ConnectedOrg, sandbox: httpx.Client
) -> None:
    # Given an active prospecting audience
    audience = create_audience(api, org)
    before = len(ad_objects(sandbox))
    # When a dry run is asked
    response = api.post(
        f"/platform-ads/audiences/{audience['audienceId']}/advert",
        json=advert(dryRun=True),
        headers=org.headers,
    )
    # Then it answers 200 with the four objects and their parameters, and nothing was created
    assert response.status_code == 200, response.text
    plan = response.json()
    assert plan["dryRun"] is True
    assert plan["currency"] == "GBP"
    assert plan["warnings"] == []
    assert [o["kind"] for o in plan["objects"]] == ["campaign", "adset", "adcreative", "ad"]
    assert all(o["platformId"] is None for o in plan["objects"])
    ad_set = plan["objects"][1]["params"]
    assert ad_set["daily_budget"] == 2000
    assert ad_set["campaign_id"] == "{campaign}"
    assert len(ad_objects(sandbox)) == before
    # And a real publish afterwards sends exactly those parameters
    published = api.post(
        f"/platform-ads/audiences/{audience['audienceId']}/advert", json=advert(), headers=org.headers
    ).json()
    assert [o["params"] for o in published["objects"]] == [o["params"] for o in plan["objects"]]


def test_a_repeated_publish_with_the_same_key_creates_one_campaign(
    api: httpx.Client, org: ConnectedOrg, sandbox: httpx.Client
) -> None:
    # Given an active audience and an idempotency key
    audience = create_audience(api, org)
    headers = {**org.headers, "Idempotency-Key": f"publish-{uuid.uuid4()}"}
    path = f"/platform-ads/audiences/{audience['audienceId']}/advert"
    # When the same publish is sent twice
    first = api.post(path, json=advert(), headers=headers)
    second = api.post(path, json=advert(), headers=headers)
    # Then both answer with the same campaign, and the sandbox has only that one
    assert first.status_code == second.status_code == 201, second.text
    assert ids_of(first.json()) == ids_of(second.json())
    campaigns = [o for o in ad_objects(sandbox) if o["kind"] == "campaign"]
    assert [c["id"] for c in campaigns].count(ids_of(first.json())["campaign"]) == 1
    # And another publish without the key is refused: the audience has its advert
    third = api.post(path, json=advert(), headers=org.headers)
    assert third.status_code == 409


# --- docs/service-contract.md §7.2: each publishing error reaches the user with its remedy, ---------
# --- and nothing is left behind on the platform unreported --------------------------------------


@pytest.fixture
def scenario_org(stack: LocalStack, api: httpx.Client, sandbox: httpx.Client) -> Any:
    """Load a sandbox scenario, then connect a fresh organization to it (the fixture ``sandbox``
    restores the default world afterwards)."""

    def connect(name: str) -> ConnectedOrg:
        sandbox.post("/scenario", json={"name": name}).raise_for_status()
        return connected_org(stack, api)

    return connect


def publish(api: httpx.Client, org: ConnectedOrg, audience: dict[str, Any], **changes: Any) -> httpx.Response:
    return api.post(
        f"/platform-ads/audiences/{audience['audienceId']}/advert",
        json=advert(**changes),
        headers=org.headers,
    )


def advert_listed(api: httpx.Client, org: ConnectedOrg, audience: dict[str, Any]) -> dict[str, Any]:
    listed = api.get("/platform-ads/audiences", headers=org.headers).json()["audiences"]
    shown: dict[str, Any] = next(a for a in listed if a["audienceId"] == audience["audienceId"])["advert"]
    return shown


def test_no_pixel_is_found_before_anything_is_created(
    api: httpx.Client, scenario_org: Any, sandbox: httpx.Client
) -> None:
    # Given an ad account without a pixel
    org = scenario_org("no_pixel")
    audience = create_audience(api, org)
    # When the advert is published
    response = publish(api, org, audience)
    # Then the user reads the spec's text and remedy, and the platform has no ad object
    assert response.status_code == 422, response.text
    assert response.json()["message"] == "No pixel found for this ad account."
    assert (
        response.json()["error"]["remedy"]
        == "Link a pixel (dataset) to the same ad account used in the service."
    )
    assert ad_objects(sandbox) == []


def test_a_missing_payment_method_rolls_back_the_campaign_ad_set_and_creative(
    api: httpx.Client, scenario_org: Any, sandbox: httpx.Client
) -> None:
    # Given an ad account without a payment method (the platform refuses the ad: 100/1359188)
    org = scenario_org("no_payment_method")
    audience = create_audience(api, org)
    # And a dry run warned about it
    [warning] = publish(api, org, audience, dryRun=True).json()["warnings"]
    assert "no payment method" in warning
    # When the advert is published
    response = publish(api, org, audience)
    # Then the user is told to update the payment method
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["code"] == "platform_payment_method_required"
    assert error["message"].startswith("Update payment method")
    assert "Nothing was left on the platform" in error["message"]
    assert "Add a valid payment method" in error["remedy"]
    # And the three objects created before the ad were deleted on the platform
    assert sorted(o["kind"] for o in ad_objects(sandbox)) == ["adcreative", "adset", "campaign"]
    assert live_objects(sandbox) == []
    shown = advert_listed(api, org, audience)
    assert shown["state"] == "rolled_back"
    assert shown["failure"]["code"] == "platform_payment_method_required"
    assert [o["state"] for o in shown["objects"]] == ["deleted", "deleted", "deleted", "planned"]


def test_a_missing_beneficiary_rolls_back_the_campaign(
    api: httpx.Client, scenario_org: Any, sandbox: httpx.Client
) -> None:
    # Given a GB audience, then the ad account leaves its business and has no DSA defaults
    org = scenario_org("default")
    audience = create_audience(api, org)
    change = {"business_name": None, "default_dsa_beneficiary": None, "default_dsa_payor": None}
    sandbox.patch(f"/ad_accounts/{ACCOUNT}", json=change).raise_for_status()
    # When the advert is published (the platform answers 100/3858081 for the ad set)
    response = publish(api, org, audience)
    # Then the user is asked for the beneficiary, with the remedy, and the campaign is gone
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["message"].startswith("Enter the person or organisation benefitting from the ads.")
    assert "default beneficiary and payer" in error["remedy"]
    assert [o["kind"] for o in ad_objects(sandbox)] == ["campaign"]
    assert live_objects(sandbox) == []


def test_a_development_mode_app_is_sent_to_generate_campaign_with_audience(
    api: httpx.Client, scenario_org: Any, sandbox: httpx.Client
) -> None:
    # Given the service's application is in development mode (creatives fail: 100/1885183)
    org = scenario_org("app_in_development_mode")
    audience = create_audience(api, org)
    # When the advert is published
    response = publish(api, org, audience)
    # Then the platform's validation refuses it before anything exists, and the remedy says what to do
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["message"] == "Ads creative post was created by an app that is in development mode."
    assert "Generate campaign with audience" in error["remedy"]
    assert ad_objects(sandbox) == []
    # And Generate campaign with audience works in that mode
    link = api.get(f"/platform-ads/audiences/{audience['audienceId']}/ads-manager-link", headers=org.headers)
    assert link.status_code == 200, link.text
    expected_ids = [audience["platformCustomAudienceId"], audience["lookalike"]["platformAudienceId"]]
    assert link.json()["platformAudienceIds"] == expected_ids
    assert link.json()["url"] == (
        f"https://adsmanager.facebook.com/adsmanager/audiences?act={BUSINESS_ACCOUNT_ID}&ids={','.join(expected_ids)}"
    )


def test_a_platform_500_gives_the_exact_message_and_trace_id_and_keeps_what_exists_for_the_repeat(
    api: httpx.Client, scenario_org: Any, sandbox: httpx.Client
) -> None:
    # Given the platform fails the ad set with an unknown error (HTTP 500, code 1)
    org = scenario_org("default")
    audience = create_audience(api, org)
    fault = {"kind": "error", "method": "POST", "path": "/adsets$", "code": 1, "http_status": 500}
    sandbox.post("/faults", json={**fault, "message": "An unknown error has occurred."}).raise_for_status()
    # When the advert is published
    response = publish(api, org, audience)
    # Then the user gets the platform's exact message and the trace id to give support
    assert response.status_code == 502, response.text
    error = response.json()["error"]
    assert "An unknown error has occurred." in error["message"]
    logged = sandbox.get("/requests", params={"path": "/adsets$", "method": "POST"}).json()["requests"]
    [failed] = [r for r in logged if "error" in r]
    trace_id = failed["error"]["fbtrace_id"]
    assert error["remedy"].startswith(f"Report this exact message to support (reference {trace_id}).")
    # And, the outcome unknown (a 500), nothing is rolled back: the repeat resumes with the campaign
    assert "same Idempotency-Key" in error["remedy"]
    assert [o["kind"] for o in live_objects(sandbox)] == ["campaign"]


def test_an_object_the_rollback_cannot_delete_is_listed_on_the_audience(
    api: httpx.Client, scenario_org: Any, sandbox: httpx.Client
) -> None:
    # Given the ad set fails, and so does the deletion of the campaign created before it
    org = scenario_org("default")
    audience = create_audience(api, org)
    sandbox.post(
        "/faults", json={"kind": "error", "method": "POST", "path": "/adsets$", "code": 2}
    ).raise_for_status()
    # (code 2 is transient: a delete is retried, so the fault outlasts the client's retries)
    sandbox.post(
        "/faults", json={"kind": "error", "method": "DELETE", "path": r"^/\d+$", "code": 2, "count": 10}
    )
    # When the advert is published
    response = publish(api, org, audience)
    # Then the answer names the object left behind
    assert response.status_code == 502, response.text
    left = live_objects(sandbox)
    assert [o["kind"] for o in left] == ["campaign"]
    assert f"campaign {left[0]['id']}" in response.json()["error"]["message"]
    # And every object still on the platform is listed on the audience with its id
    shown = advert_listed(api, org, audience)
    assert shown["state"] == "failed"
    listed = {o["platformId"] for o in shown["objects"] if o["state"] == "delete_failed"}
    assert {o["id"] for o in left} == listed


# --- The checkout route ----------------------------------------------------------------------------


def test_without_payments_only_the_product_page_is_offered_and_why(
    api: httpx.Client, org: ConnectedOrg
) -> None:
    # When the routes are read by an organization with no payments account
    settings = api.get("/platform-ads/checkout-routes", headers=org.headers).json()
    # Then only the product page is offered, with the reason and what to do
    assert settings["routes"] == ["product_page"]
    assert "payments account that takes card payments" in settings["reason"]
    assert "Payments page" in settings["remedy"]
    # And publishing with the hosted checkout names the field, and what to do
    audience = create_audience(api, org)
    response = publish(api, org, audience, checkoutRoute="hosted_checkout", dryRun=True)
    assert response.status_code == 422, response.text
    assert response.json()["error"]["field"] == "checkoutRoute"
    assert "Payments page" in response.json()["error"]["remedy"]


def test_the_hosted_checkout_route_links_the_creative_to_the_products_checkout_page(
    api: httpx.Client, org: ConnectedOrg, graph: httpx.Client, stack: LocalStack
) -> None:
    # Given the organization's payments account takes card payments, and its synced products list a
    # mug at 12.50
    connected = connect_payments(stack.api_url, org.headers["Authorization"])
    assert connected.json()["checkoutAvailable"] is True, connected.text
    sync_products(api, org)
    routes = api.get(
        "/platform-ads/checkout-routes", params={"productId": "p-mug"}, headers=org.headers
    ).json()
    page = f"{stack.api_url}/checkout/{org.org_id}/p-mug"
    assert (routes["routes"], routes["checkoutUrl"]) == (["product_page", "hosted_checkout"], page)
    audience = create_audience(api, org)
    # When the advert is published with the hosted checkout for the mug
    response = publish(api, org, audience, checkoutRoute="hosted_checkout", productId="p-mug")
    # Then the creative links to that product's checkout page on the service, tagged
    assert response.status_code == 201, response.text
    spec = read(graph, ids_of(response.json())["adcreative"], "object_story_spec")["object_story_spec"]
    link = urlsplit(spec["link_data"]["link"])
    assert f"{link.scheme}://{link.netloc}{link.path}" == page
    assert parse_qs(link.query)["utm_campaign"] == ["Spring sale"]


@pytest.mark.parametrize(
    ("product", "reason"),
    [
        ("p-gift", "The hosted checkout cannot sell 'p-gift': the shop's synced products give it no price."),
        ("sku-1", "The hosted checkout cannot sell 'sku-1': the shop's synced products do not list it."),
    ],
    ids=["listed without a price", "not listed"],
)
def test_an_advert_never_links_to_a_checkout_page_that_would_not_sell_its_product(
    api: httpx.Client, org: ConnectedOrg, stack: LocalStack, sandbox: httpx.Client, product: str, reason: str
) -> None:
    # Given payments that take card payments, and synced products with a gift card without a price
    connected = connect_payments(stack.api_url, org.headers["Authorization"])
    assert connected.json()["checkoutAvailable"] is True, connected.text
    sync_products(api, org)
    # When the routes are read for a product whose checkout page says "not sold here"
    routes = api.get("/platform-ads/checkout-routes", params={"productId": product}, headers=org.headers)
    # Then only the product page is offered, saying why and what to do, and the page does say so
    assert routes.json() | {"remedy": None} == {
        "routes": ["product_page"],
        "reason": reason,
        "remedy": None,
        "cause": "product",
        "checkoutUrl": None,
    }
    assert "or send shoppers to the store's product page" in routes.json()["remedy"]
    assert api.get(f"/checkout/{org.org_id}/{product}").status_code == 404
    # And publishing with the hosted checkout is refused before anything is created on the platform
    audience = create_audience(api, org)
    before = ad_objects(sandbox)
    response = publish(api, org, audience, checkoutRoute="hosted_checkout", productId=product)
    assert response.status_code == 422, response.text
    assert response.json()["error"]["field"] == "checkoutRoute"
    assert response.json()["message"] == f"checkoutRoute: {reason}"
    assert ad_objects(sandbox) == before


# --- Resumable steps (what the activation state machine runs) --------------------------------------


def test_a_started_publication_advances_one_object_at_a_time_and_waits_out_throttling(
    api: httpx.Client, scenario_org: Any, sandbox: httpx.Client
) -> None:
    # Given a publication started (planned and recorded) for an active audience
    org = scenario_org("default")
    audience = create_audience(api, org)
    service = wiring.publishing_service()
    started = service.start(org.org_id, audience["audienceId"], PublishAdvertRequest.model_validate(advert()))
    assert started.state == "creating"
    assert ad_objects(sandbox) == []
    # When one step runs
    first = service.advance(org.org_id, audience["audienceId"])
    # Then exactly the campaign exists, and its id is on the audience
    assert (first.state, first.done) == ("creating", False)
    assert [o["kind"] for o in ad_objects(sandbox)] == ["campaign"]
    assert advert_listed(api, org, audience)["objects"][0]["platformId"] == ad_objects(sandbox)[0]["id"]
    # When the platform throttles the ad set beyond the client's retries
    throttle = {"kind": "throttle", "code": 80004, "path": "/adsets$", "count": 6, "regain_minutes": 0}
    sandbox.post("/faults", json=throttle).raise_for_status()
    waiting = service.advance(org.org_id, audience["audienceId"])
    # Then the step asks to wait and nothing is rolled back
    assert (waiting.state, waiting.done) == ("creating", False)
    assert waiting.wait_seconds >= 1
    assert [o["status"] for o in ad_objects(sandbox)] == ["PAUSED"]
    # When the steps continue
    steps = 0
    while not service.advance(org.org_id, audience["audienceId"]).done:
        steps += 1
    # Then the chain is complete, one create per step, and paused
    assert steps == 3
    assert sorted(o["kind"] for o in live_objects(sandbox)) == ["ad", "adcreative", "adset", "campaign"]
    assert advert_listed(api, org, audience)["state"] == "paused"


def test_the_budget_is_sent_in_the_minor_units_of_the_accounts_currency(
    api: httpx.Client, scenario_org: Any, sandbox: httpx.Client, graph: httpx.Client
) -> None:
    # Given an ad account billed in yen, which has no minor units (offset 1)
    org = scenario_org("default")
    sandbox.patch(f"/ad_accounts/{ACCOUNT}", json={"currency": "JPY", "min_daily_budget": 150})
    audience = create_audience(api, org)
    # When an advert with a budget of 2,000 yen is published
    response = publish(api, org, audience, dailyBudget="2000")
    # Then the ad set's budget is 2000, not 200000
    assert response.status_code == 201, response.text
    assert response.json()["currency"] == "JPY"
    assert read(graph, ids_of(response.json())["adset"], "daily_budget")["daily_budget"] == 2000
    # And a budget with decimals, or below the account's minimum, is refused before anything is created
    for budget, reason in (("1999.5", "no decimals"), ("100", "minimum daily budget of 150 JPY")):
        refused = publish(api, org, audience, dailyBudget=budget, dryRun=True)
        assert refused.status_code == 400
        assert reason in refused.json()["message"]


# The campaign and the creative are first validated (execution_options=validate_only) by a POST to
# the same edge: the fault lets that one through.
EDGES = [
    pytest.param("/campaigns$", 1, id="campaign"),
    pytest.param("/adsets$", 0, id="adset"),
    pytest.param("/adcreatives$", 1, id="adcreative"),
    pytest.param("/ads$", 0, id="ad"),
]


@pytest.mark.parametrize(("edge", "after"), EDGES)
@pytest.mark.parametrize(
    "fault",
    [
        pytest.param("lost_answer", id="made-but-answer-lost"),
        pytest.param("transient", id="transient-not-made"),
    ],
)
def test_a_create_whose_outcome_is_unknown_is_resumed_by_the_retry_one_object_of_each_kind(
    api: httpx.Client, scenario_org: Any, sandbox: httpx.Client, fault: str, edge: str, after: int
) -> None:
    # Given the platform fails one object's create with HTTP 500 (code 2, transient): having made it
    # (its answer lost), or not
    org = scenario_org("default")
    audience = create_audience(api, org)
    fault_spec = {"kind": fault, "method": "POST", "path": edge, "after": after}
    sandbox.post("/faults", json=fault_spec).raise_for_status()
    headers = {**org.headers, "Idempotency-Key": f"publish-{uuid.uuid4()}"}
    path = f"/platform-ads/audiences/{audience['audienceId']}/advert"
    # When the advert is published, and the request repeated
    failed = api.post(path, json=advert(), headers=headers)
    listed_between = advert_listed(api, org, audience)
    retried = api.post(path, json=advert(), headers=headers)
    # Then the first says to repeat it, nothing was rolled back meanwhile, and the repeat finishes
    assert failed.status_code == 502, failed.text
    assert "same Idempotency-Key" in failed.json()["error"]["remedy"]
    assert listed_between["state"] == "creating"
    assert retried.status_code == 201, retried.text
    # And the account holds exactly one object of each kind, all of them the advert's
    objects = ad_objects(sandbox)
    assert sorted(o["kind"] for o in objects) == ["ad", "adcreative", "adset", "campaign"]
    assert not [o for o in objects if o["status"] == "DELETED"]
    assert {o["id"] for o in objects} == set(ids_of(retried.json()).values())


def test_a_step_after_a_crash_adopts_the_object_instead_of_creating_it_twice(
    api: httpx.Client, scenario_org: Any, sandbox: httpx.Client, graph: httpx.Client
) -> None:
    # Given a step that sent the campaign create and crashed before reading the answer: the record
    # says "attempted" (saved before sending) and the platform has the campaign
    org = scenario_org("default")
    audience = create_audience(api, org)
    service = wiring.publishing_service()
    service.start(org.org_id, audience["audienceId"], PublishAdvertRequest.model_validate(advert()))
    store = wiring.audience_store()
    record = store.get(org.org_id, audience["audienceId"])
    assert record is not None
    assert record.publication is not None
    planned = record.publication.objects[0]
    form = {k: v if isinstance(v, str) else json.dumps(v) for k, v in planned.params.items()}
    sent = graph.post(f"/{ACCOUNT}/campaigns", data=form)
    assert sent.status_code == 200, sent.text
    planned.state = "attempted"
    store.put(record)
    # When the step runs again
    service.advance(org.org_id, audience["audienceId"])
    # Then the campaign that exists is adopted, not created a second time
    campaigns = [o for o in ad_objects(sandbox) if o["kind"] == "campaign"]
    assert [c["id"] for c in campaigns] == [sent.json()["id"]]
    adopted = store.get(org.org_id, audience["audienceId"])
    assert adopted is not None
    assert adopted.publication is not None
    assert (adopted.publication.objects[0].state, adopted.publication.objects[0].platform_id) == (
        "created",
        sent.json()["id"],
    )


def test_a_pixel_unlinked_while_the_steps_run_is_refused_by_the_platform_and_rolled_back(
    api: httpx.Client, scenario_org: Any, sandbox: httpx.Client
) -> None:
    # Given a publication planned with the account's pixel, which is then unlinked
    org = scenario_org("default")
    audience = create_audience(api, org)
    service = wiring.publishing_service()
    service.start(org.org_id, audience["audienceId"], PublishAdvertRequest.model_validate(advert()))
    sandbox.delete(f"/pixels/{PIXEL_ID}").raise_for_status()
    # When the steps run to the end (the platform refuses the ad set: 100/1349193)
    progress = [service.advance(org.org_id, audience["audienceId"]) for _ in range(3)]
    # Then the campaign is created, the ad set refused, the campaign deleted, and the last step
    # reports the spec's text and remedy without raising
    assert [(p.state, p.done) for p in progress] == [
        ("creating", False),
        ("rolling_back", False),
        ("rolling_back", False),
    ]
    final = service.advance(org.org_id, audience["audienceId"])
    assert (final.state, final.done) == ("rolled_back", True)
    assert final.failure is not None
    assert final.failure.code == "platform_promoted_object_missing"
    assert final.failure.message == "Select a promoted object for your ad set."
    assert final.failure.remedy is not None
    assert "Link a pixel" in final.failure.remedy
    assert [o["kind"] for o in ad_objects(sandbox)] == ["campaign"]
    assert live_objects(sandbox) == []


def test_the_same_request_after_fixing_a_refusal_publishes_afresh(
    api: httpx.Client, scenario_org: Any, sandbox: httpx.Client
) -> None:
    # Given a publish refused for the payment method, and rolled back
    org = scenario_org("no_payment_method")
    audience = create_audience(api, org)
    headers = {**org.headers, "Idempotency-Key": f"publish-{uuid.uuid4()}"}
    path = f"/platform-ads/audiences/{audience['audienceId']}/advert"
    assert api.post(path, json=advert(), headers=headers).status_code == 422
    # When the marketer adds a payment method and repeats the same request
    sandbox.patch(f"/ad_accounts/{ACCOUNT}", json={"funding_source": "FUNDING-2"}).raise_for_status()
    repeated = api.post(path, json=advert(), headers=headers)
    # Then the advert is published, and only its four objects are live
    assert repeated.status_code == 201, repeated.text
    assert sorted(o["id"] for o in live_objects(sandbox)) == sorted(ids_of(repeated.json()).values())


def test_a_new_publish_first_deletes_what_a_failed_rollback_left(
    api: httpx.Client, scenario_org: Any, sandbox: httpx.Client
) -> None:
    # Given a failed publish that left its campaign on the platform
    org = scenario_org("default")
    audience = create_audience(api, org)
    sandbox.post("/faults", json={"kind": "error", "method": "POST", "path": "/adsets$", "code": 1})
    refuse_deletes = {"kind": "error", "method": "DELETE", "path": r"^/\d+$", "code": 1, "count": 6}
    sandbox.post("/faults", json=refuse_deletes)  # a delete is retried: 6 outlast the client's retries
    assert publish(api, org, audience).status_code == 502
    [left] = live_objects(sandbox)
    # When the platform works again and the advert is published again
    published = publish(api, org, audience)
    # Then the leftover campaign was deleted first, and the new chain is all that is live
    assert published.status_code == 201, published.text
    assert left["id"] not in {o["id"] for o in live_objects(sandbox)}
    assert sorted(o["id"] for o in live_objects(sandbox)) == sorted(ids_of(published.json()).values())


# --- Deleting an advert ----------------------------------------------------------------------------


def test_deleting_an_advert_removes_its_objects_and_then_the_audience_can_go(
    api: httpx.Client, scenario_org: Any, sandbox: httpx.Client
) -> None:
    # Given a published advert
    org = scenario_org("default")
    audience = create_audience(api, org)
    assert publish(api, org, audience).status_code == 201
    path = f"/platform-ads/audiences/{audience['audienceId']}"
    # Then the audience cannot be deleted while its advert targets it
    refused = api.delete(path, params={"confirm": "true"}, headers=org.headers)
    assert refused.status_code == 409
    assert "Delete its advert first" in refused.json()["error"]["remedy"]
    assert refused.json()["error"]["action"] == "delete_advert"
    # When the advert is deleted without confirmation, then with it
    unconfirmed = api.delete(f"{path}/advert", headers=org.headers)
    deleted = api.delete(f"{path}/advert", params={"confirm": "true"}, headers=org.headers)
    # Then only the confirmed request deletes, and every object is gone from the platform and the list
    assert unconfirmed.status_code == 400
    assert deleted.status_code == 204, deleted.text
    assert len(ad_objects(sandbox)) == 4
    assert live_objects(sandbox) == []
    assert advert_listed(api, org, audience) is None
    # And the audience can now be deleted
    assert api.delete(path, params={"confirm": "true"}, headers=org.headers).status_code == 204


def test_a_retargeting_advert_for_a_segment_audience_targets_its_customers_countries(
    api: httpx.Client, org: ConnectedOrg, graph: httpx.Client
) -> None:
    # Given an active retargeting audience made from a segment of a synced shop (its request names
    # no users: the members are the segment's customers, each with a country)
    synced_and_trained(api, org)
    created = api.post(
        "/platform-ads/audiences",
        json={"name": "Likely buyers", "segment": SEGMENT, "holdoutPercent": 0},
        headers=org.headers,
    )
    assert created.status_code == 201, created.text
    audience = created.json()
    chosen = wiring.targeting_service().users_for(org.org_id, SegmentSpec.model_validate(SEGMENT))
    countries = sorted({user.country for user in chosen.users if user.country})
    assert countries, "the synthetic shop's customers have countries"
    # When an advert is published without a countries field
    response = api.post(
        f"/platform-ads/audiences/{audience['audienceId']}/advert", json=advert(), headers=org.headers
    )
    # Then its ad set targets the audience in the countries of the segment's customers
    assert response.status_code == 201, response.text
    ad_set = read(graph, ids_of(response.json())["adset"], "targeting")
    assert ad_set["targeting"]["custom_audiences"] == [{"id": audience["platformCustomAudienceId"]}]
    assert ad_set["targeting"]["geo_locations"] == {"countries": countries}
