"""The dashboard's Events page in Chromium (issue 21, item 6), as a marketer uses it: the events a sync
and the shop's pages sent, per day and by source and type; a rejected event in plain words with what to
do; the snippet copied; the site key rotated and revoked after confirming (the endpoint then refuses
it); the domains and the test event code declared. Scanned with axe-core and photographed."""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from local.connected import ConnectedOrg
from local.platform_browser import consent
from local.seed import create_user
from local.seed import sign_in as jwt_for
from local.stack import LocalStack
from tests.integration.browser.conftest import DESKTOP, PHONE, axe_violations, dump, sign_in
from tests.integration.test_purchase_events import ShopFiles, purchases_of, sync
from tests.integration.test_site_events import page_event, post_events, site_key

pytestmark = pytest.mark.integration


@dataclass(frozen=True)
class Merchant:
    email: str
    password: str
    org: ConnectedOrg


def merchant(stack: LocalStack, api: httpx.Client, *, connected: bool) -> Merchant:
    """A dashboard user of a new organization, its ad account connected through the sandbox's dialog."""
    org_id = f"org-{uuid.uuid4().hex[:8]}"
    email = f"{org_id}@example.com"
    _, password = create_user(stack, org_id, email)
    org = ConnectedOrg(org_id, {"Authorization": f"Bearer {jwt_for(stack, email, password)}"})
    if connected:
        url = api.post("/platform-ads/connect", headers=org.headers).json()["authorizationUrl"]
        assert consent(url, stack.api_url, org.headers["Authorization"]).status_code == 200
    return Merchant(email, password, org)


def test_a_merchant_reads_what_was_sent_copies_the_snippet_and_rotates_and_revokes_the_key(
    page: Page, stack: LocalStack, api: httpx.Client, screenshots: Path
) -> None:
    # Given a connected shop that synced ten days of orders (seven days' are sent as purchases), whose
    # pages sent two add-to-carts and a purchase without its value (rejected by the service's check)
    shop_user = merchant(stack, api, connected=True)
    shop = ShopFiles()
    purchases = purchases_of(shop_user.org, sync(api, shop_user.org, shop))
    sent, skipped = purchases.sent, purchases.outside_window + purchases.skipped_too_old
    assert sent == len(shop.in_window())
    assert skipped == len(shop.orders) - sent
    first_key = site_key(api, shop_user.org)["siteKey"]
    answer = post_events(
        api, first_key, [page_event(), page_event(), page_event("Purchase", "order-1001", content_ids=["p1"])]
    )
    assert answer.status_code == 200, answer.text
    # When the merchant opens the Events page
    sign_in(page, shop_user.email, shop_user.password)
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Events").click()
    page.wait_for_url("**/events.html")
    # Then the period's total, every one of the 14 days, and the counts by source and type are shown
    expect(page.locator("#events-total")).to_have_text(
        re.compile(rf"^{sent + 2} events sent from \S+ to \S+ \(UTC\); 1 rejected, {skipped} skipped\.")
    )
    expect(page.locator("#events-chart li")).to_have_count(14)
    rows = page.locator("#by-source tr")
    expect(rows).to_have_count(3)
    expect(rows.nth(0)).to_contain_text(re.compile(rf"Synced orders\s*Purchase\s*{sent}\s*0\s*{skipped}"))
    expect(rows.nth(1)).to_contain_text(re.compile(r"The shop's pages\s*AddToCart\s*2\s*0\s*0"))
    expect(rows.nth(2)).to_contain_text(re.compile(r"The shop's pages\s*Purchase\s*0\s*1\s*0"))
    # And the rejected purchase says what happened and what to do, in plain words, with the failed check
    rejection = page.locator("#rejections li")
    expect(rejection).to_have_count(1)
    expect(rejection).to_contain_text("Purchase (id order-1001)")
    expect(rejection).to_contain_text("The purchase's value was missing or not a number")
    expect(rejection).to_contain_text("What to do: Pass the order's total as a number")
    expect(rejection).to_contain_text(
        "The check that failed: custom_data a purchase needs its value and currency"
    )
    # And the site: its declared domain, its key, and the snippet with the key
    expect(page.get_by_label("Declared domains")).to_have_value("shop.example.com")
    expect(page.locator("#key-facts")).to_contain_text(first_key)
    expect(page.locator("#snippet")).to_contain_text(f"?key={first_key}")
    # And nothing on the page fails axe-core, at a desktop's width or a phone's
    violations = axe_violations(page)
    for label, size in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(size)
        page.screenshot(path=screenshots / f"events-sent-{label}.png", full_page=True)
    assert not violations, dump(violations)
    page.set_viewport_size(DESKTOP)

    # When the 28 days are asked for
    page.get_by_label("Period").select_option("28")
    # Then 28 days are drawn, with the same events
    expect(page.locator("#events-chart li")).to_have_count(28)
    expect(page.locator("#events-total")).to_contain_text(f"{sent + 2} events sent")

    # When the snippet is copied
    page.get_by_role("button", name="Copy snippet").click()
    expect(page.get_by_role("status")).to_have_text("The snippet is copied to your clipboard.")
    # Then the clipboard holds the script with the key
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied == page.locator("#snippet").text_content()
    assert copied.startswith("<script>")
    assert f"?key={first_key}" in copied

    # When the key is rotated, after confirming
    questions: list[str] = []

    def accept(dialog) -> None:  # type: ignore[no-untyped-def]
        questions.append(dialog.message)
        dialog.accept()

    page.once("dialog", accept)
    page.get_by_role("button", name="Rotate key").click()
    # Then a new key and snippet are shown, and the old key works for 24 hours more
    expect(page.get_by_role("status")).to_contain_text("The site key is rotated")
    assert "keeps working for 24 hours" in questions[-1]
    new_key = page.locator("#key-facts code").first.text_content()
    assert new_key
    assert new_key != first_key
    assert new_key.startswith("sk_")
    expect(page.locator("#snippet")).to_contain_text(f"?key={new_key}")
    expect(page.locator("#key-facts")).to_contain_text("Previous key works until")
    assert post_events(api, first_key, [page_event()]).status_code == 200
    assert post_events(api, new_key, [page_event()]).status_code == 200

    # When the merchant asks to revoke it and declines, then asks again and confirms
    page.once("dialog", lambda dialog: dialog.dismiss())
    page.get_by_role("button", name="Revoke key").click()
    expect(page.locator("#key-facts")).to_contain_text(new_key)
    assert post_events(api, new_key, [page_event()]).status_code == 200
    page.once("dialog", accept)
    page.get_by_role("button", name="Revoke key").click()
    # Then the key and the snippet are gone, Create site key is offered, and both keys are refused
    expect(page.get_by_role("status")).to_have_text(
        "The site key is revoked: your shop's pages no longer send events."
    )
    assert "stop sending events at once" in questions[-1]
    expect(page.locator("#key-facts")).to_contain_text("None: create one to get the snippet.")
    expect(page.locator("#snippet-block")).to_be_hidden()
    expect(page.get_by_role("button", name="Revoke key")).to_be_hidden()
    expect(page.get_by_role("button", name="Create site key")).to_be_visible()
    assert post_events(api, new_key, [page_event()]).status_code == 401
    assert post_events(api, first_key, [page_event()]).status_code == 401
    # And the three events sent since with the keys in force are counted, after a reload
    page.reload()
    expect(page.locator("#events-total")).to_contain_text(f"{sent + 5} events sent")


def test_a_new_shop_declares_its_domain_and_test_code_and_creates_its_key(
    page: Page, stack: LocalStack, api: httpx.Client, screenshots: Path
) -> None:
    # Given a new organization that has sent nothing
    newcomer = merchant(stack, api, connected=False)
    sign_in(page, newcomer.email, newcomer.password)
    page.goto("/events.html")
    # Then the page says there is nothing yet and how to start
    expect(page.locator("#events-total")).to_contain_text("0 events sent")
    expect(page.locator("#events-total")).to_contain_text("paste the snippet below")
    expect(page.locator("#rejections")).to_have_text("No event was rejected in this period.")
    expect(page.locator("#key-facts")).to_contain_text("None: create one to get the snippet.")
    # When it asks for a key before declaring a domain
    page.get_by_role("button", name="Create site key").click()
    # Then it is told to declare the domain first
    expect(page.get_by_role("status")).to_contain_text("Declare the shop's domain before creating a site key")
    # When it types a domain that is not one
    page.get_by_label("Declared domains").fill("my shop")
    page.get_by_role("button", name="Save domains and code").click()
    # Then the field is marked and the message says how to give it
    expect(page.get_by_role("status")).to_contain_text("is not a domain")
    expect(page.get_by_label("Declared domains")).to_have_attribute("aria-invalid", "true")
    # When it gives the shop's address as the browser shows it, and Events Manager's test code
    page.get_by_label("Declared domains").fill("https://Shop.Example.com/\nlocalhost:8080")
    page.get_by_label("Test event code (optional)").fill("TEST12345")
    page.get_by_role("button", name="Save domains and code").click()
    # Then both domains are stored as domains, and the test code is in force
    expect(page.get_by_role("status")).to_have_text(
        "Saved: pages of shop.example.com, localhost:8080 may send events."
    )
    expect(page.get_by_label("Declared domains")).to_have_value("shop.example.com\nlocalhost:8080")
    expect(page.locator("#test-state")).to_have_text(
        "Your shop's pages' events now carry the test code TEST12345."
    )
    # When it creates the key (no confirmation: nothing is replaced)
    page.get_by_role("button", name="Create site key").click()
    # Then the key and its snippet are shown, and Rotate and Revoke are offered
    expect(page.get_by_role("status")).to_have_text(
        "The site key is created: paste the snippet into your shop's pages."
    )
    key = page.locator("#key-facts code").first.text_content()
    assert key
    assert key.startswith("sk_")
    expect(page.locator("#snippet")).to_contain_text(f"?key={key}")
    expect(page.get_by_role("button", name="Rotate key")).to_be_visible()
    stored = api.get("/platform-ads/events/site", headers=newcomer.org.headers).json()
    assert (stored["siteKey"], stored["testEventCode"]) == (key, "TEST12345")
    # When a page of the shop sends a purchase while no ad account is connected (answered 409)
    assert post_events(api, key, [page_event("Purchase")]).status_code == 409
    page.reload()
    # Then the page counts it as not sent, says it is lost and what to do
    expect(page.locator("#events-total")).to_contain_text("0 events sent")
    expect(page.locator("#events-total")).to_contain_text("; 1 not sent.")
    expect(page.locator("#events-total")).to_contain_text("Not sent from your shop's pages")
    expect(page.locator("#events-total")).to_contain_text("connect it again there")
    expect(page.locator("#by-source tr")).to_have_text(
        re.compile(r"The shop's pages\s*Purchase\s*0\s*0\s*0\s*1")
    )
    # And the page as a phone shows it passes axe-core
    page.set_viewport_size(PHONE)
    violations = axe_violations(page)
    page.screenshot(path=screenshots / "events-new-shop-phone.png", full_page=True)
    assert not violations, dump(violations)
