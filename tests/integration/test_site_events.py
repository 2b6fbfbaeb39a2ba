"""Events from the shop's own pages through the local stack (issue 21, item 3): the Events page's site
settings and key, the public site events endpoint (its own API, CORS for the declared domains only),
the relay to the sandbox's pixel as website events, and the key's rotation and revocation."""

from __future__ import annotations

import json
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from local.connected import ConnectedOrg
from local.seed import PURCHASE_MODEL, DemoCredentials
from local.stack import LocalStack
from platform_sandbox.scenarios import PIXEL_ID

pytestmark = pytest.mark.integration

SHOP = "https://www.shop.example.com"
BROWSER = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36"


def site_key(api: httpx.Client, org: ConnectedOrg, code: str | None = None) -> dict[str, Any]:
    """Declare shop.example.com (and a test event code) and create the site key."""
    saved = api.post(
        "/platform-ads/events/site",
        json={"domains": ["https://shop.example.com/"], "testEventCode": code},
        headers=org.headers,
    )
    assert saved.status_code == 200, saved.text
    assert saved.json()["domains"] == ["shop.example.com"]
    issued = api.post("/platform-ads/events/site/key", headers=org.headers)
    assert issued.status_code == 200, issued.text
    return dict(issued.json())


def page_event(name: str = "AddToCart", event_id: str | None = None, **custom: Any) -> dict[str, Any]:
    return {
        "eventName": name,
        "eventId": event_id or f"e-{uuid.uuid4().hex}",
        "eventTime": int(time.time()),
        "url": f"{SHOP}/products/p1?utm_source=x",
        "fbp": "fb.1.1795975100000.1098115397",
        "fbc": "fb.1.1795975100000.AbCdEfGhIj",
        "customData": custom or {"content_ids": ["p1"], "value": 24.0, "currency": "gbp"},
    }


def post_events(
    api: httpx.Client, key: str, events: list[dict[str, Any]], origin: str | None = SHOP
) -> httpx.Response:
    headers = {"Content-Type": "text/plain", "User-Agent": BROWSER}
    if origin:
        headers["Origin"] = origin
    return api.post(
        "/site-events", params={"key": key}, content=json.dumps({"events": events}), headers=headers
    )


def received(sandbox: httpx.Client, event_id: str) -> list[dict[str, Any]]:
    held = sandbox.get(f"/pixels/{PIXEL_ID}/events").json()["events"]
    return [entry for entry in held if entry["event"].get("event_id") == event_id]


def events_report(api: httpx.Client, org: ConnectedOrg) -> dict[str, Any]:
    found = api.get("/platform-ads/events", params={"days": 14}, headers=org.headers)
    assert found.status_code == 200, found.text
    return dict(found.json())


def sent_on_the_events_page(api: httpx.Client, org: ConnectedOrg) -> dict[str, int]:
    """The shop's pages' events the Events page counts sent, by event name."""
    return {row["eventName"]: row["sent"] for row in events_report(api, org)["bySource"] if row["sent"]}


def test_a_pages_event_reaches_the_pixel_as_a_website_event_with_the_browsers_details(
    api: httpx.Client, org: ConnectedOrg, sandbox: httpx.Client
) -> None:
    # Given a shop that declared its domain, a test event code, and created its site key
    site = site_key(api, org, code="TEST4242")
    assert site["siteKey"].startswith("sk_")
    assert site["siteKey"] in site["snippet"]
    # When one of its pages sends an add-to-cart
    event = page_event()
    answer = post_events(api, site["siteKey"], [event])
    # Then it is sent, and the page may read the answer (its origin is allowed)
    assert answer.status_code == 200, answer.text
    assert answer.json() == {"received": 1, "sent": 1, "skipped": 0, "rejected": []}
    assert answer.headers["Access-Control-Allow-Origin"] == SHOP
    # And the pixel has a website event with the page, the browser's address and user agent and the
    # cookies unhashed, the test event code, and the pixel's own names for the data
    [entry] = received(sandbox, event["eventId"])
    sent = entry["event"]
    assert (sent["event_name"], sent["action_source"]) == ("AddToCart", "website")
    assert sent["event_source_url"] == event["url"]
    assert sent["user_data"]["client_user_agent"] == BROWSER
    assert sent["user_data"]["client_ip_address"] == "127.0.0.1"
    assert (sent["user_data"]["fbp"], sent["user_data"]["fbc"]) == (event["fbp"], event["fbc"])
    assert sent["custom_data"] == {"content_ids": ["p1"], "value": 24.0, "currency": "GBP"}
    assert entry["test_event_code"] == "TEST4242"


def test_the_same_event_sent_twice_is_kept_once_by_the_platform(
    api: httpx.Client, org: ConnectedOrg, sandbox: httpx.Client
) -> None:
    # Given a page's purchase, with the order's id as the event id (the browser pixel's eventID too)
    key = site_key(api, org)["siteKey"]
    event = page_event("Purchase", f"order-{uuid.uuid4().hex[:8]}", value=30.0, currency="GBP")
    # When the page sends it twice (a reload of the thank-you page)
    first, second = post_events(api, key, [event]), post_events(api, key, [event])
    # Then both are taken, and the platform keeps one
    assert first.status_code == second.status_code == 200
    entries = received(sandbox, event["eventId"])
    assert [entry["deduplicated"] for entry in entries] == [False, True]
    # And the Events page counts it once, as the platform keeps it (walking make dev, it said "Sent 2")
    assert sent_on_the_events_page(api, org) == {"Purchase": 1}


def test_a_page_of_another_domain_is_refused_and_cannot_read_the_answer(
    api: httpx.Client, org: ConnectedOrg, sandbox: httpx.Client
) -> None:
    key = site_key(api, org)["siteKey"]
    event = page_event()
    # When a page of another site (or no page at all) uses the shop's key
    elsewhere = post_events(api, key, [event], origin="https://shop.example.com.evil.test")
    nowhere = post_events(api, key, [event], origin=None)
    # Then both are refused, nothing is sent, and the other site's page is not allowed to read
    assert (elsewhere.status_code, nowhere.status_code) == (403, 403)
    assert elsewhere.json()["error"]["field"] == "Origin"
    assert "Access-Control-Allow-Origin" not in elsewhere.headers
    assert received(sandbox, event["eventId"]) == []


def test_a_preflight_is_allowed_for_the_declared_domains_only(api: httpx.Client, org: ConnectedOrg) -> None:
    key = site_key(api, org)["siteKey"]
    asked = {"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type"}
    shop = api.options("/site-events", params={"key": key}, headers={"Origin": SHOP, **asked})
    other = api.options("/site-events", params={"key": key}, headers={"Origin": "https://evil.test", **asked})
    assert shop.status_code == 204
    assert shop.headers["Access-Control-Allow-Origin"] == SHOP
    assert "POST" in shop.headers["Access-Control-Allow-Methods"]
    assert "Access-Control-Allow-Origin" not in other.headers


def test_a_rotated_key_keeps_working_for_a_while_and_a_revoked_one_gets_401(
    api: httpx.Client, org: ConnectedOrg
) -> None:
    # Given a site key, rotated
    old = site_key(api, org)["siteKey"]
    rotated = api.post("/platform-ads/events/site/key", headers=org.headers).json()
    new = rotated["siteKey"]
    assert new != old
    assert rotated["previousKeyExpiresAt"]
    # Then both work while the new snippet reaches every page
    assert post_events(api, old, [page_event()]).status_code == 200
    assert post_events(api, new, [page_event()]).status_code == 200
    # When the key is revoked
    revoked = api.delete("/platform-ads/events/site/key", headers=org.headers)
    assert revoked.status_code == 200
    assert revoked.json()["siteKey"] is None
    # Then neither works any more, and the page is told to paste the snippet again
    for key in (old, new):
        refused = post_events(api, key, [page_event()])
        assert refused.status_code == 401
        assert "snippet" in refused.json()["error"]["remedy"]


def test_bad_input_is_a_400_naming_the_field_never_a_500(api: httpx.Client, org: ConnectedOrg) -> None:
    key = site_key(api, org)["siteKey"]
    bad_name = post_events(api, key, [{**page_event(), "eventName": "Lead"}])
    not_json = api.post("/site-events", params={"key": key}, content=b"{not json", headers={"Origin": SHOP})
    too_many = post_events(api, key, [page_event() for _ in range(21)])
    assert (bad_name.status_code, not_json.status_code, too_many.status_code) == (400, 400, 400)
    assert bad_name.json()["error"]["field"] == "events.0.eventName"
    assert not_json.json()["error"]["field"] == "body"
    # And the Events page lists each refused request with the reason and what to do (walking make dev,
    # a page's wrong shopEvent call never reached it: the snippet swallows the 400)
    report = events_report(api, org)
    listed = {(row["eventName"], row["reason"], row["remedy"]) for row in report["rejections"]}
    assert ("Lead", bad_name.json()["error"]["message"], bad_name.json()["error"]["remedy"]) in listed
    assert len(listed) == 3
    rejected = {row["eventName"]: row["rejected"] for row in report["bySource"]}
    assert rejected == {"AddToCart": 21, "Other": 2}
    # And an unknown key is told so before anything about the body
    assert post_events(api, "sk_unknown", [{"x": 1}]).status_code == 401


# The platform failing as the sandbox's faults make it fail, and what the page is answered: never a 500.
# Each fault fires on every events call its count covers (the client's retries included).
PLATFORM_FAULTS = {
    "platform_500": ({"kind": "transient", "count": 20}, 503, "events_not_relayed"),
    "throttled": ({"kind": "throttle", "code": 80004, "count": 20}, 503, "events_not_relayed"),
    "no_answer_in_time": ({"kind": "delay", "seconds": 40, "count": 20}, 503, "events_not_relayed"),
    "token_revoked": ({"kind": "revoke_token", "subcode": 460}, 409, "conflict"),
}


@pytest.mark.parametrize("fault", PLATFORM_FAULTS.values(), ids=PLATFORM_FAULTS.keys())
def test_a_platform_that_fails_is_never_a_500_to_the_page_and_the_event_is_kept_once_when_sent_again(
    api: httpx.Client, org: ConnectedOrg, sandbox: httpx.Client, fault: tuple[dict[str, Any], int, str]
) -> None:
    spec, status, code = fault
    # Given a site key, and a platform whose events calls fail
    key = site_key(api, org)["siteKey"]
    sandbox.post("/faults", json={**spec, "method": "POST", "path": "/events$"}).raise_for_status()
    event = page_event("Purchase", f"order-{uuid.uuid4().hex[:8]}", value=30.0, currency="GBP")
    # When the page sends a purchase
    answer = post_events(api, key, [event])
    # Then it is told what to do in the service's error shape, never a 500, and may read the answer
    assert (answer.status_code, answer.json()["error"]["code"]) == (status, code), answer.text
    assert answer.json()["error"]["remedy"]
    assert answer.headers["Access-Control-Allow-Origin"] == SHOP
    if status == 503:  # the page may send it again after the wait, and nothing was kept
        assert int(answer.headers["Retry-After"]) >= 1
        assert received(sandbox, event["eventId"]) == []
        # And once the platform takes events again, the same purchase sent again arrives once
        sandbox.delete("/faults").raise_for_status()
        again = post_events(api, key, [event])
        assert again.json() == {"received": 1, "sent": 1, "skipped": 0, "rejected": []}
        assert [entry["deduplicated"] for entry in received(sandbox, event["eventId"])] == [False]


def test_a_batch_the_platform_refuses_is_split_and_its_lone_refused_event_is_answered_with_the_reason(
    api: httpx.Client, org: ConnectedOrg, sandbox: httpx.Client
) -> None:
    # Given a site key, and a platform that refuses a request for what one of its events says (code 100:
    # nothing of it kept) three times: the page's two events, then the half with the first of them, again
    key = site_key(api, org)["siteKey"]
    refusal = {"kind": "error", "method": "POST", "path": "/events$", "code": 100, "subcode": 2804019}
    sandbox.post("/faults", json={**refusal, "message": "Invalid parameter", "count": 2}).raise_for_status()
    bad, good = page_event("Purchase", f"order-{uuid.uuid4().hex[:8]}"), page_event()
    # When the page sends both
    answer = post_events(api, key, [bad, good])
    # Then the one that can succeed is sent, and the other answered with the platform's reason, 200
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert (body["received"], body["sent"], body["skipped"]) == (2, 1, 0)
    [rejected] = body["rejected"]
    assert rejected["eventId"] == bad["eventId"]
    assert "Invalid parameter" in rejected["reason"]
    assert rejected["remedy"]
    assert received(sandbox, bad["eventId"]) == []
    assert len(received(sandbox, good["eventId"])) == 1


def test_a_flood_from_one_site_is_throttled_while_predictions_are_answered(
    stack: LocalStack, api: httpx.Client, org: ConnectedOrg, sandbox: httpx.Client, demo: DemoCredentials
) -> None:
    assert stack.runner is not None
    prediction = {"input": {"user_id": demo.sample_user_id, "product_id": demo.sample_product_id}}

    def predict() -> int:
        answer = api.post(
            f"/client/predict/{PURCHASE_MODEL}", json=prediction, headers={"X-Service-Api-Key": demo.api_key}
        )
        return answer.status_code

    # Given a site allowed 60 events a day, three full requests (a window the test cannot see turn)
    with stack.runner.environment(SITE_EVENTS_PER_WINDOW="60", SITE_EVENTS_WINDOW_SECONDS="86400"):
        key = site_key(api, org)["siteKey"]
        floods = [[page_event() for _ in range(20)] for _ in range(12)]
        # When its pages send twelve requests of 20 events, four at a time, while the shop's backend
        # asks for six predictions
        with ThreadPoolExecutor(max_workers=4) as pages, ThreadPoolExecutor(max_workers=1) as backend:
            predicted = [backend.submit(predict) for _ in range(6)]
            answers = list(pages.map(lambda events: post_events(api, key, events), floods))
            predictions = [future.result() for future in predicted]
    # Then three requests were taken and the other nine told to wait (429, Retry-After): none failed
    assert sorted(answer.status_code for answer in answers) == [200] * 3 + [429] * 9
    for answer in answers:
        if answer.status_code == 429:
            assert answer.json()["error"]["code"] == "site_events_throttled"
            assert 1 <= int(answer.headers["Retry-After"]) <= 86_400
    # And exactly the events of the requests taken reached the pixel
    taken = {
        event["eventId"]
        for answer, events in zip(answers, floods, strict=True)
        if answer.status_code == 200
        for event in events
    }
    held = {
        entry["event"].get("event_id") for entry in sandbox.get(f"/pixels/{PIXEL_ID}/events").json()["events"]
    }
    flooded = {event["eventId"] for events in floods for event in events}
    assert len(taken) == 60
    assert held & flooded == taken
    # And the Events page counts those 60 sent, each once
    assert sent_on_the_events_page(api, org) == {"AddToCart": 60}
    # And every prediction asked for meanwhile was answered
    assert predictions == [200] * 6
