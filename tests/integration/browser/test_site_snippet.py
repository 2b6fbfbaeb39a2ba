"""The Events page's snippet on a shop's page in Chromium (issue 21, item 3): the page's events reach
the sandbox's pixel through the site events endpoint with the id the browser pixel got, a purchase sent
twice is kept once, and the page may read the endpoint's answers (CORS for its declared domain)."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page

from local.connected import ConnectedOrg
from platform_sandbox.scenarios import PIXEL_ID
from tests.integration.patience import BACKGROUND_JOB_SECONDS

pytestmark = pytest.mark.integration


@pytest.fixture
def shop() -> Iterator[tuple[str, list[str]]]:
    """A shop's web server on this machine (http is allowed on localhost): its address, and the page
    it serves at every path (set by the test)."""
    served = [""]

    class Pages(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = served[0].encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Pages)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://localhost:{server.server_port}", served
    server.shutdown()
    server.server_close()


def shop_page(snippet: str) -> str:
    """A product page with a stand-in browser pixel that notes its calls, and the snippet."""
    return f"""<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Shop</title>
<script>
window.pixelCalls = [];
window.fbq = function () {{ window.pixelCalls.push([...arguments]); }};
</script>
{snippet}</head><body><h1>Product p1</h1></body></html>"""


def held(sandbox: httpx.Client, event_ids: set[str], count: int) -> list[dict[str, Any]]:
    """The pixel's events with ``event_ids``, once ``count`` of them arrived (the snippet's requests
    are not awaited by the page; they go out while this waits outside Playwright, see this_machine)."""
    deadline = time.monotonic() + BACKGROUND_JOB_SECONDS
    while True:
        events = sandbox.get(f"/pixels/{PIXEL_ID}/events").json()["events"]
        found = [entry for entry in events if entry["event"].get("event_id") in event_ids]
        if len(found) >= count or time.monotonic() > deadline:
            return found
        time.sleep(0.2)


def test_the_snippets_events_arrive_with_the_pixels_ids_deduplicated_and_readable(
    page: Page, api: httpx.Client, org: ConnectedOrg, sandbox: httpx.Client, shop: tuple[str, list[str]]
) -> None:
    address, served = shop
    # Given a shop whose domain is declared, with its site key's snippet on its product page
    saved = api.post("/platform-ads/events/site", json={"domains": [address]}, headers=org.headers)
    assert saved.status_code == 200, saved.text
    site = api.post("/platform-ads/events/site/key", headers=org.headers).json()
    served[0] = shop_page(site["snippet"])
    page.context.add_cookies([{"name": "_fbp", "value": "fb.1.1795975100000.1098115397", "url": address}])
    # When a shopper lands from an ad (fbclid), views the product and buys it; the thank-you page is
    # shown twice (a reload), so its purchase is sent twice
    page.goto(f"{address}/products/p1?fbclid=AbCdEfGhIjKl")
    order = f"order-{uuid.uuid4().hex[:8]}"
    viewed = page.evaluate("shopEvent('ViewContent', {content_ids: ['p1'], value: 24, currency: 'GBP'})")
    # (the reload comes after the first thank-you page's request was relayed: a warm container serves it)
    for shown in (2, 3):
        page.evaluate(
            f"shopEvent('Purchase', {{value: 24, currency: 'GBP', content_ids: ['p1']}}, '{order}')"
        )
        entries = held(sandbox, {viewed, order}, shown)
    # Then the browser pixel got each event with the id the server copy carries
    calls = page.evaluate("window.pixelCalls")
    assert [(call[1], call[3]["eventID"]) for call in calls] == [
        ("ViewContent", viewed),
        ("Purchase", order),
        ("Purchase", order),
    ]
    # And the pixel kept the view and one of the two purchases, as website events with the browser's
    # user agent, the _fbp cookie and a click id made from the fbclid (its case kept)
    assert sorted((e["event"]["event_name"], e["deduplicated"]) for e in entries) == [
        ("Purchase", False),
        ("Purchase", True),
        ("ViewContent", False),
    ]
    for entry in entries:
        user = entry["event"]["user_data"]
        assert entry["event"]["action_source"] == "website"
        assert entry["event"]["event_source_url"].startswith(f"{address}/products/p1")
        assert user["client_user_agent"] == page.evaluate("navigator.userAgent")
        assert user["fbp"] == "fb.1.1795975100000.1098115397"
        assert user["fbc"].startswith("fb.1.")
        assert user["fbc"].endswith(".AbCdEfGhIjKl")
    # And the page may read the endpoint's answer (CORS allows its origin)
    answer = page.evaluate(
        """(url) => fetch(url, {method: 'POST', headers: {'Content-Type': 'text/plain'},
             body: JSON.stringify({events: [{eventName: 'AddToCart', eventId: 'cart-' + Date.now(),
             url: location.href}]})}).then((r) => r.json())""",
        f"{site['endpoint']}?key={site['siteKey']}",
    )
    assert answer == {"received": 1, "sent": 1, "skipped": 0, "rejected": []}
