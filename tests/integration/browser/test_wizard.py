"""The launch wizard in a real browser against the local stack: three files PUT to presigned links,
the sync report, readiness, targeting with the live preview, destination setup, the activation
followed live, and a published advert read back from the platform sandbox."""

from __future__ import annotations

import re
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, Route, expect

from local.seed import create_user
from local.stack import LocalStack
from platform_sandbox.scenarios import BUSINESS_ACCOUNT_ID
from tests.integration.browser.conftest import DESKTOP, PHONE, ShopUser, axe_violations, dump, sign_in
from tests.integration.patience import BACKGROUND_JOB_MS
from tests.integration.test_data_source import shop_files

pytestmark = pytest.mark.integration

PRODUCT = "p00001"


def connected_user(page: Page, stack: LocalStack) -> tuple[str, str]:
    """A new organization's user, signed in, who connected the sandbox's ad account in the browser."""
    org_id = f"org-{uuid.uuid4().hex[:8]}"
    email = f"{org_id}@example.com"
    _, password = create_user(stack, org_id, email)
    sign_in(page, email, password)
    page.get_by_role("button", name="Connect an ad account").click()
    page.get_by_role("button", name="Approve").click()
    page.wait_for_url("**/connection.html?connected=1")
    return email, password


class Photographer:
    """Screenshots of each step at desktop and phone widths, and the axe-core scan of each."""

    def __init__(self, page: Page, folder: Path) -> None:
        self.page, self.folder = page, folder
        self.violations: dict[str, list[dict[str, Any]]] = {}

    def __call__(self, name: str) -> None:
        found = axe_violations(self.page)
        if found:
            self.violations[name] = found
        for label, size in (("desktop", DESKTOP), ("phone", PHONE)):
            self.page.set_viewport_size(size)
            self.page.screenshot(path=self.folder / f"wizard-{name}-{label}.png", full_page=True)
        self.page.set_viewport_size(DESKTOP)


def test_from_three_files_to_a_published_prospecting_advert(
    page: Page, stack: LocalStack, screenshots: Path
) -> None:
    # Given: a new organization that connected its ad account, and a shop's files with one bad order
    connected_user(page, stack)
    files = shop_files(n_users=500, seed=11)
    files["orders"] += b"bad-1,nobody,p00000,1,5.0,2024-06-01T10:00:00\n"
    shot = Photographer(page, screenshots)
    page.get_by_role("link", name="Launch wizard").click()
    expect(page.get_by_role("heading", name="1. Your shop's data")).to_be_visible()
    expect(page.locator("#data-current")).to_have_text("No data is synced yet.")
    shot("1-data")

    # When: the three files are uploaded and synced
    for kind in ("customers", "products", "orders"):
        page.get_by_label(f"{kind.capitalize()} file").set_input_files(
            files=[{"name": f"{kind}.csv", "mimeType": "text/csv", "buffer": files[kind]}]
        )
    page.get_by_role("button", name="Upload and sync").click()

    # Then: the progress bar reaches the total, and the sync stops for the rejected row
    expect(page.locator("#upload-bar")).to_have_attribute("value", "100")
    expect(page.locator("#upload-progress-text")).to_contain_text("100%")
    expect(page.get_by_role("heading", name="2. Sync")).to_be_focused()
    expect(page.locator("#sync-state")).to_contain_text("1 row was rejected", timeout=BACKGROUND_JOB_MS)
    rejected = page.locator("#rejected-rows tr")
    expect(rejected).to_have_count(1)
    expect(rejected).to_contain_text("orders.csv")
    expect(rejected).to_contain_text("user_id")
    orders_read = files["orders"].count(b"\n") - 1
    cells = page.locator("#sync-counts tr").filter(has_text="orders").locator("td")
    expect(cells).to_have_text(["orders", f"{orders_read:,}", f"{orders_read - 1:,}"])
    shot("2-sync-review")

    # When: the good rows are kept
    page.get_by_role("button", name="Keep the good rows and sync").click()

    # Then: the version is stored and both models train on it
    expect(page.locator("#training")).to_contain_text("Trained", timeout=BACKGROUND_JOB_MS)
    expect(page.get_by_role("button", name="Continue to readiness")).to_be_enabled(timeout=BACKGROUND_JOB_MS)
    expect(page.locator("#training li").filter(has_text="shop-purchase")).to_contain_text("Trained")
    shot("2-sync-trained")
    page.get_by_role("button", name="Continue to readiness").click()

    # Then: every readiness item passes in the sandbox's default world
    expect(page.locator("#readiness-summary")).to_have_text("Everything passes: you can go on.")
    shot("3-readiness")
    page.get_by_role("button", name="Continue", exact=True).click()

    # When: Publish advert is the destination
    expect(page.get_by_role("radio", name=re.compile("^Publish advert"))).to_be_checked()
    shot("4-destination")
    page.get_by_role("button", name="Continue to targeting").click()

    # And: the top 80% of the purchase model's scores for a product are previewed
    page.get_by_label("Product ID").fill(PRODUCT)
    page.get_by_label("Percent of users").fill("80")
    summary = page.locator("#preview-summary")
    expect(summary).to_contain_text("scored users are in the segment")
    # (what is uploaded is what is left of the segment after the holdout and without a match key)
    expect(summary).to_contain_text(
        re.compile(r"[\d,]+ users will be uploaded: those not held out who have an e-mail or phone\.$")
    )
    size, scored = (int(n.replace(",", "")) for n in re.findall(r"[\d,]+", summary.inner_text())[:2])
    assert size == -(-scored * 80 // 100)
    bars = page.locator("#histogram li")
    expect(bars).not_to_have_count(0)
    in_segment = sum(
        int(t.split(" of ")[0].replace(",", "")) for t in bars.locator(".bar-value").all_inner_texts()
    )
    assert in_segment == size
    shot("5-targeting")
    page.get_by_role("button", name="Continue to destination setup").click()

    # And: set up as a prospecting advert with a 2% GB lookalike, first trying AU while the
    # platform is still answering for GB (the default): the late GB answer must not win
    held: list[Route] = []
    page.route(
        "**/platform-ads/targeting/preview",
        lambda route: held.append(route) if '"GB"' in (route.request.post_data or "") else route.continue_(),
    )
    page.get_by_role("radio", name=re.compile("^Prospecting")).check()
    page.get_by_label("Lookalike size").select_option("2")
    page.get_by_label("Lookalike country").select_option("AU")
    expect(page.locator("#seed-check")).to_contain_text("Not enough to seed a lookalike")
    with page.expect_response(lambda response: "GB" in (response.request.post_data or "")):
        held.pop().continue_()
    page.unroute("**/platform-ads/targeting/preview")
    expect(page.locator("#seed-check")).to_contain_text("can be matched in AU")
    page.get_by_role("button", name="Launch and publish the advert").click()
    expect(page.get_by_role("alert").filter(has_text="Not enough")).to_contain_text("choose another country")
    expect(page.get_by_label("Lookalike country")).to_be_focused()
    page.get_by_label("Lookalike country").select_option("GB")
    expect(page.locator("#seed-check")).to_contain_text("Enough to seed a lookalike")
    expect(page.locator("#setup-error")).to_be_empty()
    expect(page.get_by_label("Daily budget (GBP)")).to_be_visible()
    page.get_by_label("Campaign name").fill("Spring sale")
    page.get_by_label("Daily budget (GBP)").fill("20.00")
    page.get_by_label("Headline").fill("Back in stock")
    page.get_by_label("Description (optional)").fill("Free delivery this week")
    page.get_by_label("Destination URL").fill(f"https://shop.example.com/products/{PRODUCT}")
    page.get_by_label("Checkout route").select_option("product_page")
    shot("6-setup")
    page.get_by_role("button", name="Launch and publish the advert").click()

    # Then: the activation runs through its steps to a published, paused advert with its ids and links
    expect(page.get_by_role("heading", name="Launched")).to_be_visible(timeout=BACKGROUND_JOB_MS)
    expect(page.locator("#activation-bar")).to_have_attribute("value", "100")
    steps = page.locator("#activation-steps li")
    expect(steps).to_have_count(8)  # select, hash, create, upload, wait for seed, lookalike, publish, mark
    expect(steps.filter(has_not_text="Done")).to_have_count(0)
    expect(page.locator("#result-summary")).to_contain_text("nothing is spent until you switch it on")
    ids = dict(
        zip(
            page.locator("#result-ids dt").all_inner_texts(),
            page.locator("#result-ids dd").all_inner_texts(),
            strict=True,
        )
    )
    assert set(ids) == {
        "Custom audience id",
        "Lookalike audience id",
        "Campaign id",
        "Ad set id",
        "Creative id",
        "Ad id",
    }
    expect(page.get_by_role("link", name="Open in the ads manager")).to_have_attribute(
        "href", re.compile(BUSINESS_ACCOUNT_ID)
    )
    shot("7-activation-done")

    # And: the platform holds the campaign, paused, with the budget in pence
    state = httpx.get(f"{stack.sandbox.url}/_admin/state").json()
    objects = {o["id"]: o for o in state["ad_objects"]}
    assert objects[ids["Campaign id"]]["status"] == "PAUSED"
    assert objects[ids["Ad id"]]["status"] == "PAUSED"

    # When: the audience is opened from the result, and deleting it is tried while its advert runs
    page.get_by_role("link", name="See it in Audiences").click()
    row = page.get_by_role("row").filter(has_text="Likely buyers of p00001")
    expect(row).to_contain_text(f"{ids['Campaign id']} (paused)")
    expect(row).to_contain_text("2% in GB")
    shot("audiences-with-advert")
    page.once("dialog", lambda dialog: dialog.accept())
    row.get_by_role("button", name="Delete Likely buyers of p00001").click()
    # Then: it is refused, saying why in words (no API path), with the fix offered as one button
    status = page.get_by_role("status")
    expect(status).to_contain_text("has an advert on the platform, which targets it")
    expect(status).not_to_contain_text("/platform-ads")
    fix = page.get_by_role("button", name="Delete the advert, then the audience")
    expect(fix).to_be_focused()
    shot("audiences-advert-first")

    # When: the fix is confirmed
    page.once("dialog", lambda dialog: dialog.accept())
    fix.click()

    # Then: nothing of it is left, in the list or on the platform
    expect(page.get_by_role("status")).to_have_text("“Likely buyers of p00001” and its advert are deleted.")
    expect(page.locator("#audiences")).not_to_contain_text("Likely buyers of p00001")
    left = httpx.get(f"{stack.sandbox.url}/_admin/state").json()
    advert_objects = [o for o in left["ad_objects"] if o["id"] in ids.values()]
    assert [o["status"] for o in advert_objects] == ["DELETED"] * 4
    deleted = {a["id"]: a["deleted"] for a in left["audiences"]}
    assert deleted[ids["Custom audience id"]] is True
    assert deleted[ids["Lookalike audience id"]] is True
    assert not shot.violations, dump(shot.violations)


def test_a_failing_readiness_item_stops_the_wizard_and_says_what_to_do(page: Page, stack: LocalStack) -> None:
    # Given: an organization that has not connected an ad account
    org_id = f"org-{uuid.uuid4().hex[:8]}"
    _, password = create_user(stack, org_id, f"{org_id}@example.com")
    sign_in(page, f"{org_id}@example.com", password)
    # When
    page.goto("/wizard.html#readiness")
    # Then: failing items are marked in words and carry their remedy
    items = page.locator("#readiness-items li")
    expect(items.first).to_be_visible()
    expect(page.locator("#readiness-summary")).to_contain_text("need attention")
    expect(items.filter(has_text="Fail").first).to_contain_text("What to do:")
    # And: going on (by keyboard) is refused with what to do
    page.get_by_role("button", name="Check again").focus()
    page.keyboard.press("Tab")
    expect(page.get_by_role("button", name="Continue", exact=True)).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.get_by_role("status")).to_have_text(
        "Error: Some items fail: do what each failing item says, then press Check again."
    )
    expect(page.get_by_role("heading", name="3. Is everything ready?")).to_be_visible()


def test_a_publish_error_shows_its_remedy_and_trying_again_after_the_fix_publishes(
    page: Page, stack: LocalStack, synced_user: ShopUser, sandbox: httpx.Client, screenshots: Path
) -> None:
    # Given: a connected organization whose shop is synced, and an ad account that lost its payment method
    sign_in(page, synced_user.email, synced_user.password)
    sandbox.patch(f"/ad_accounts/{BUSINESS_ACCOUNT_ID}", json={"funding_source": None}).raise_for_status()

    # When: the wizard runs on the current data to Publish advert
    page.goto("/wizard.html")
    page.get_by_role("button", name="Use the current data").click()
    page.get_by_role("button", name="Continue to readiness").click()
    page.get_by_role("button", name="Continue", exact=True).click()
    # (these two steps by keyboard alone: each step's heading takes focus, Tab goes through its controls)
    expect(page.get_by_role("heading", name="4. Where should the audience go?")).to_be_focused()
    page.keyboard.press("Tab")
    expect(page.get_by_role("radio", name=re.compile("^Publish advert"))).to_be_focused()
    page.keyboard.press("Tab")
    expect(page.get_by_role("button", name="Continue to targeting")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="5. Who should see it?")).to_be_focused()
    page.keyboard.press("Tab")
    expect(page.get_by_label("Model")).to_be_focused()
    page.keyboard.press("Tab")
    expect(page.get_by_label("Product ID")).to_be_focused()
    page.keyboard.type(PRODUCT)
    expect(page.get_by_role("button", name="Continue to destination setup")).to_be_enabled()
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    expect(page.get_by_role("button", name="Continue to destination setup")).to_be_focused()
    page.keyboard.press("Enter")
    page.get_by_label("Campaign name").fill("Spring sale")
    page.get_by_label("Daily budget (GBP)").fill("20")
    page.get_by_label("Audience name").fill("Publish error buyers")
    # (the countries are suggested from where the users to upload are: the preview's countries)
    expect(page.get_by_label("Countries to advertise in")).to_have_value(
        re.compile(r"^[A-Z]{2}(, [A-Z]{2}){0,4}$")
    )
    page.get_by_label("Countries to advertise in").fill("GB, US")
    page.get_by_label("Headline").fill("Back in stock")
    page.get_by_label("Destination URL").fill(f"https://shop.example.com/products/{PRODUCT}")
    page.get_by_role("button", name="Launch and publish the advert").click()

    # Then: the audience is activated, and publishing fails with what to do
    error = page.locator("#activation-error")
    expect(error).to_contain_text("Update payment method", timeout=BACKGROUND_JOB_MS)
    expect(error).to_contain_text("Add a valid payment method")
    expect(page.locator("#activation-steps li").filter(has_text="Failed")).to_contain_text(
        "Publish the advert"
    )
    for label, size in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(size)
        page.screenshot(path=screenshots / f"wizard-7-publish-error-{label}.png", full_page=True)
    page.set_viewport_size(DESKTOP)

    # When: the payment method is added back and the user publishes again
    sandbox.patch(
        f"/ad_accounts/{BUSINESS_ACCOUNT_ID}", json={"funding_source": "FUNDING-1"}
    ).raise_for_status()
    posts: list[str] = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
    page.get_by_role("button", name="Try again").click()

    # Then: the same audience gets its advert, in a new attempt through the retry endpoint (the
    # original request is not sent again)
    expect(page.get_by_role("heading", name="Launched")).to_be_visible(timeout=BACKGROUND_JOB_MS)
    listed = httpx.get(f"{stack.api_url}/platform-ads/audiences", headers=synced_user.org.headers).json()
    [audience] = [a for a in listed["audiences"] if a["name"] == "Publish error buyers"]
    assert audience["advert"]["state"] == "paused"
    assert posts == [f"{stack.api_url}/platform-ads/activations/{audience['audienceId']}/retry"]


def test_a_missing_empty_or_header_only_file_is_refused_before_anything_is_uploaded(
    page: Page, stack: LocalStack, screenshots: Path
) -> None:
    # Given: a signed-in user on the wizard's first step, watching what the page sends
    org_id = f"org-{uuid.uuid4().hex[:8]}"
    _, password = create_user(stack, org_id, f"{org_id}@example.com")
    sign_in(page, f"{org_id}@example.com", password)
    page.goto("/wizard.html")
    expect(page.locator("#data-current")).to_have_text("No data is synced yet.")
    posts: list[str] = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
    error = page.locator("#upload-error")
    files = shop_files(n_users=20, seed=3)

    def choose(kind: str, data: bytes) -> None:
        page.get_by_label(f"{kind.capitalize()} file").set_input_files(
            files=[{"name": f"{kind}.csv", "mimeType": "text/csv", "buffer": data}]
        )

    # When: only the customers file is chosen and the form is sent with the keyboard
    choose("customers", files["customers"])
    page.get_by_role("button", name="Upload and sync").focus()
    page.keyboard.press("Enter")
    # Then: the missing file is named, next to the form, and takes focus
    expect(error).to_have_text("Choose the products file: all three files are needed.")
    expect(page.get_by_label("Products file")).to_be_focused()

    # When: the products file is empty
    choose("products", b"")
    choose("orders", files["orders"])
    page.get_by_role("button", name="Upload and sync").click()
    # Then: refused, saying what to do, with the file marked
    expect(error).to_have_text(
        "The products file (products.csv) is empty. Export your products again, with their rows, and "
        "choose that file."
    )
    expect(page.get_by_label("Products file")).to_have_attribute("aria-invalid", "true")
    violations = axe_violations(page)
    for label, size in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(size)
        page.screenshot(path=screenshots / f"wizard-1-empty-file-{label}.png", full_page=True)
    page.set_viewport_size(DESKTOP)
    assert not violations, dump(violations)

    # When: it has its header row and nothing else (a Windows line end)
    choose("products", b"product_id,name,category,price\r\n")
    page.get_by_role("button", name="Upload and sync").click()
    # Then: refused too, and nothing was sent to the service or to storage
    expect(error).to_have_text(
        "The products file (products.csv) has only its header row and no products. Export your products "
        "again, with their rows, and choose that file."
    )
    assert posts == []
