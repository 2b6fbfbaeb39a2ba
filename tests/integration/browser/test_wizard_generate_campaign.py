"""Generate campaign with audience, in a real browser: the wizard uploads the audience, creates no
advert, and its result links to the ads manager with the ad account and that audience selected."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from playwright.sync_api import BrowserContext, Page, Route, expect

from local.stack import LocalStack
from platform_sandbox.scenarios import BUSINESS_ACCOUNT_ID
from tests.integration.browser.conftest import ShopUser, sign_in
from tests.integration.patience import BACKGROUND_JOB_MS

pytestmark = pytest.mark.integration

ADS_MANAGER = "https://adsmanager.facebook.com"


def test_generate_campaign_uploads_the_audience_and_opens_the_ads_manager_with_it(
    page: Page, context: BrowserContext, stack: LocalStack, synced_user: ShopUser
) -> None:
    # Given: a connected organization with a synced shop. The ads manager is the platform's own site,
    # out of reach here: its page is answered in the browser, and what the link asked for is recorded
    opened: list[str] = []

    def ads_manager(route: Route) -> None:
        opened.append(route.request.url)
        route.fulfill(
            status=200, content_type="text/html", body="<title>Ads manager</title><h1>Ads manager</h1>"
        )

    context.route(f"{ADS_MANAGER}/**", ads_manager)
    sign_in(page, synced_user.email, synced_user.password)
    objects_before = {o["id"] for o in httpx.get(f"{stack.sandbox.url}/_admin/state").json()["ad_objects"]}

    # When: the wizard runs on the current data to Generate campaign with audience
    page.goto("/wizard.html")
    page.get_by_role("button", name="Use the current data").click()
    page.get_by_role("button", name="Continue to readiness").click()
    page.get_by_role("button", name="Continue", exact=True).click()
    page.get_by_role("radio", name=re.compile("^Generate campaign with audience")).check()
    page.get_by_role("button", name="Continue to targeting").click()
    page.get_by_label("Product ID").fill("p00001")
    page.get_by_role("button", name="Continue to destination setup").click()
    # (no advert to set up: only the audience's name)
    expect(page.get_by_label("Campaign name")).to_be_hidden()
    page.get_by_label("Audience name").fill("Generated campaign buyers")
    page.get_by_role("button", name="Launch and open the ads manager").click()

    # Then: the audience is on the platform, and the result says the advert is the user's to build
    expect(page.get_by_role("heading", name="Launched")).to_be_visible(timeout=BACKGROUND_JOB_MS)
    steps = page.locator("#activation-steps li")
    expect(steps.filter(has_text="Prepare the ads manager with the audience selected")).to_contain_text(
        "Done"
    )
    expect(steps.filter(has_not_text="Done")).to_have_count(0)
    expect(page.locator("#result-summary")).to_contain_text("Build the advert in the ads manager")
    ids = dict(
        zip(
            page.locator("#result-ids dt").all_inner_texts(),
            page.locator("#result-ids dd").all_inner_texts(),
            strict=True,
        )
    )
    assert list(ids) == ["Custom audience id"]
    state = httpx.get(f"{stack.sandbox.url}/_admin/state").json()
    [audience] = [a for a in state["audiences"] if a["id"] == ids["Custom audience id"]]
    assert audience["name"] == "Generated campaign buyers"
    # And: nothing of an advert was made on the platform
    assert {o["id"] for o in state["ad_objects"]} == objects_before

    # When: the result's link is followed
    with page.expect_popup() as popup_info:
        page.get_by_role("link", name="Open in the ads manager").click()
    popup = popup_info.value
    popup.wait_for_load_state()

    # Then: a new tab opens the ads manager on the ad account with that audience selected
    expect(popup).to_have_title("Ads manager")
    assert len(opened) == 1
    link = urlsplit(opened[0])
    assert f"{link.scheme}://{link.netloc}" == ADS_MANAGER
    query = parse_qs(link.query)
    assert query["act"] == [BUSINESS_ACCOUNT_ID]
    assert query["ids"] == [ids["Custom audience id"]]
