"""The sync report's coverage per match key (issue 23, item 2), in Chromium: for each key of the customers
file, how many customers gave it and how many of those values the platform would take, who can be
sent at all, and in words what more keys do for the match."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from local.stack import LocalStack
from tests.integration.browser.conftest import DESKTOP, PHONE, ShopUser, axe_violations, dump, sign_in

pytestmark = pytest.mark.integration

NAMES = {
    "email": "E-mail",
    "phone": "Phone",
    "first_name": "First name",
    "last_name": "Last name",
    "city": "City",
    "state": "State or region",
    "postcode": "Postcode (ZIP)",
    "country": "Country",
    "date_of_birth": "Date of birth",
    "gender": "Gender",
    "external_id": "External id (your shop's customer id)",
    "madid": "Mobile advertiser id",
}


def test_the_sync_report_shows_each_match_keys_coverage_and_what_more_keys_do(
    page: Page, stack: LocalStack, synced_user: ShopUser, screenshots: Path
) -> None:
    # Given: a synced shop, and what the data source says of its customers' match keys
    with httpx.Client(base_url=stack.api_url, timeout=30) as api:
        current = api.get("/platform-ads/data-source", headers=synced_user.org.headers).json()["current"]
    customers = current["rowCounts"]["customers"]
    keys = current["matchKeys"]
    assert set(keys) == set(NAMES)

    # When: the marketer opens the wizard with the current data
    sign_in(page, synced_user.email, synced_user.password)
    page.goto("/wizard.html")
    page.get_by_role("button", name="Use the current data").click()
    expect(page.get_by_role("button", name="Continue to readiness")).to_be_enabled()

    # Then: a row per match key with the customers who gave it and those the platform would take
    report = page.locator("#match-keys")
    expect(report.get_by_role("heading", name="How your customers can be matched")).to_be_visible()
    expect(report.locator("caption")).to_have_text(f"Customers with each match key, of {customers:,}")
    rows = report.locator("tbody tr")
    expect(rows).to_have_count(len(NAMES))
    for at, (key, name) in enumerate(NAMES.items()):
        given, usable = keys[key]["given"], keys[key]["usable"]
        expect(rows.nth(at).locator("td")).to_have_text(
            [
                name,
                f"{given:,} ({round(100 * given / customers)}%)",
                f"{usable:,} ({round(100 * usable / customers)}%)",
            ]
        )
    # And who can be sent at all, and in words what more keys do and which the file lacks
    matchable = current["matchableCustomers"]
    expect(page.locator("#match-summary")).to_have_text(
        f"{matchable:,} of {customers:,} customers ({round(100 * matchable / customers)}%) have a usable "
        "e-mail or phone, so an audience can send them; the others cannot be sent, whatever else they have."
    )
    effect = page.locator("#match-effect")
    expect(effect).to_contain_text("sending every key you have is its general guidance")
    lacking = [
        name.lower()
        for key, name in NAMES.items()
        if key not in ("email", "phone") and not keys[key]["usable"]
    ]
    assert lacking, "the demo shop is expected to lack some keys"
    expect(effect).to_contain_text(f"Your file has none usable for: {', '.join(lacking)}.")

    violations = axe_violations(page)
    for label, size in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(size)
        page.screenshot(path=screenshots / f"wizard-2-sync-match-keys-{label}.png", full_page=True)
    page.set_viewport_size(DESKTOP)
    assert not violations, dump(violations)
    expect(page).to_have_url(re.compile("#sync$"))
