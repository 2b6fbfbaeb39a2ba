"""A value-based lookalike from the wizard, in a real browser (issue 15, item 3): prospecting with
"Value-based lookalike" ticked uploads a value-based seed, every member with its predicted value, and
builds the lookalike from it on the platform (docs/platform-notes.md §4.1)."""

from __future__ import annotations

import re

import httpx
import pytest
from playwright.sync_api import BrowserContext, Page, expect

from local.stack import LocalStack
from tests.integration.browser.conftest import make_synced_user, sign_in
from tests.integration.patience import BACKGROUND_JOB_MS

pytestmark = pytest.mark.integration


def test_a_value_based_lookalike_is_chosen_in_destination_setup_and_built_on_the_platform(
    page: Page, context: BrowserContext, stack: LocalStack
) -> None:
    # Given: a connected organization with a synced shop of 600 customers, 235 in GB with an
    # e-mail or phone (the session's shop of 300 has 117, and the launch's random holdout of a tenth
    # left 98 of them to upload once: fewer than a lookalike's 100; the ads manager link is answered
    # in the browser: it is the platform's own site)
    synced_user = make_synced_user(stack, n_users=600)
    context.route(
        "https://adsmanager.facebook.com/**",
        lambda route: route.fulfill(status=200, content_type="text/html", body="<title>Ads manager</title>"),
    )
    sign_in(page, synced_user.email, synced_user.password)

    # When: the wizard runs on the current data to a prospecting audience of every scored user, value-based,
    # in GB
    page.goto("/wizard.html")
    page.get_by_role("button", name="Use the current data").click()
    page.get_by_role("button", name="Continue to readiness").click()
    page.get_by_role("button", name="Continue", exact=True).click()
    page.get_by_role("radio", name=re.compile("^Generate campaign with audience")).check()
    page.get_by_role("button", name="Continue to targeting").click()
    page.get_by_label("Product ID").fill("p00001")
    page.get_by_label("Percent of users").fill("100")  # enough of them in GB to seed a lookalike
    expect(page.locator("#preview-summary")).to_contain_text("scored users are in the segment")
    page.get_by_role("button", name="Continue to destination setup").click()
    value_based = page.get_by_role("checkbox", name=re.compile("^Value-based lookalike"))
    expect(value_based).to_be_hidden()  # retargeting has no lookalike
    page.get_by_role("radio", name=re.compile("^Prospecting")).check()
    page.get_by_label("Lookalike country").select_option("GB")
    expect(page.locator("#seed-check")).to_contain_text("Enough to seed a lookalike")
    value_based.check()
    page.get_by_label("Audience name").fill("Valuable lookalike seed")
    page.get_by_role("button", name="Launch and open the ads manager").click()

    # Then: launched with the seed and its lookalike
    expect(page.get_by_role("heading", name="Launched")).to_be_visible(timeout=BACKGROUND_JOB_MS)
    ids = dict(
        zip(
            page.locator("#result-ids dt").all_inner_texts(),
            page.locator("#result-ids dd").all_inner_texts(),
            strict=True,
        )
    )
    seed_id, lookalike_id = ids["Custom audience id"], ids["Lookalike audience id"]
    # And: the platform holds the seed as value-based, every member with a value, and the lookalike of it
    admin = f"{stack.sandbox.url}/_admin"
    held = httpx.get(f"{admin}/audiences/{seed_id}/members").json()
    assert held["is_value_based"] is True
    values = [value for group in held["members"] for value in group["values"]]
    assert len(values) == held["count"] >= 100
    assert all(value is not None and value >= 0 for value in values)
    [lookalike] = [a for a in httpx.get(f"{admin}/state").json()["audiences"] if a["id"] == lookalike_id]
    assert lookalike["origin_audience_id"] == seed_id
