"""The dashboard in a real browser (Debian's Chromium) against the local stack: sign-in through
moto's Cognito, the API over CORS from the dashboard's own origin, every page scanned by axe-core
and photographed at desktop and phone widths."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from local.seed import DemoCredentials, create_user
from local.seed import sign_in as jwt_for
from local.stack import LocalStack
from tests.integration.browser.conftest import DESKTOP, PHONE, axe_violations, dump, sign_in

pytestmark = pytest.mark.integration


def test_signing_in_with_the_demo_credentials_opens_the_dashboard(page: Page, demo: DemoCredentials) -> None:
    # When
    sign_in(page, demo.email, demo.password)
    # Then
    expect(page.get_by_text(f"Signed in as {demo.email}")).to_be_visible()


def test_a_wrong_password_says_what_to_do_and_stays_on_the_sign_in_page(
    page: Page, demo: DemoCredentials
) -> None:
    # Given
    page.goto("/index.html")
    page.get_by_label("E-mail").fill(demo.email)
    page.get_by_label("Password").fill("not-the-password")
    # When
    page.get_by_role("button", name="Sign in").click()
    # Then
    expect(page.get_by_role("alert")).to_have_text(
        "The e-mail or password is wrong. Check both and try again."
    )
    expect(page).to_have_url(re.compile(r"/index\.html$"))


def test_an_empty_form_names_what_is_missing(page: Page) -> None:
    page.goto("/index.html")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_have_text("Enter both your e-mail and your password.")


def test_signing_out_ends_the_session(page: Page, demo: DemoCredentials) -> None:
    # Given
    sign_in(page, demo.email, demo.password)
    # When
    page.get_by_role("button", name="Sign out").click()
    # Then
    page.wait_for_url("**/index.html")
    page.goto("/api-keys.html")
    expect(page.get_by_role("dialog", name="Sign in to continue")).to_be_visible()


def test_a_key_is_created_shown_once_copied_and_revoked(page: Page, demo: DemoCredentials) -> None:
    # Given
    sign_in(page, demo.email, demo.password)
    page.goto("/api-keys.html")
    # When
    page.get_by_label("What the key is for").fill("browser test key")
    page.get_by_label("Daily limit (optional)").fill("500")
    page.get_by_role("button", name="Create key").click()
    # Then: shown once, and the key works on the prediction surface
    shown = page.locator("#new-key-value")
    expect(shown).to_have_text(re.compile(r"^\S+_\S+$"))
    key = shown.inner_text()
    assert httpx.get(f"{_api(page)}/client/models", headers={"X-Service-Api-Key": key}).status_code == 200
    page.get_by_role("button", name="Copy key").click()
    expect(page.get_by_role("status")).to_have_text("The key is copied to your clipboard.")
    assert page.evaluate("navigator.clipboard.readText()") == key
    row = page.get_by_role("row").filter(has_text="browser test key")
    expect(row).to_contain_text("Active")
    expect(row).to_contain_text("of 500")
    # When: revoked after confirming
    page.once("dialog", lambda dialog: dialog.accept())
    row.get_by_role("button", name=re.compile("^Revoke key browser test key")).click()
    # Then
    expect(page.get_by_role("status")).to_have_text("Key “browser test key” is revoked.")
    expect(row).to_contain_text("Revoked")
    assert httpx.get(f"{_api(page)}/client/models", headers={"X-Service-Api-Key": key}).status_code == 401
    # And the revoked key is no longer offered to copy: it stayed shown under "Copy it now"
    expect(page.locator("#new-key")).to_be_hidden()
    expect(page.get_by_text(key)).to_have_count(0)


def test_a_key_without_a_label_is_refused_with_what_to_do(page: Page, demo: DemoCredentials) -> None:
    sign_in(page, demo.email, demo.password)
    page.goto("/api-keys.html")
    page.get_by_role("button", name="Create key").click()
    expect(page.get_by_role("status")).to_have_text(
        "Error: Give the key a label (1 to 64 characters) so you can tell it apart later."
    )
    expect(page.get_by_label("What the key is for")).to_be_focused()


@pytest.mark.parametrize("limit", ["0", "1.5", "-3"])
def test_a_daily_limit_that_is_not_a_whole_number_from_1_is_refused_at_the_field(
    page: Page, demo: DemoCredentials, limit: str
) -> None:
    # Given
    sign_in(page, demo.email, demo.password)
    page.goto("/api-keys.html")
    expect(page.locator("#keys")).to_contain_text("demo key")
    # When
    page.get_by_label("What the key is for").fill(f"limit {limit}")
    page.get_by_label("Daily limit (optional)").fill(limit)
    page.get_by_role("button", name="Create key").click()
    # Then: said in the field's words, at the field, and nothing created (the API's refusal named
    # "dailyQuota", a name the page never shows, in a banner away from the field)
    expect(page.get_by_role("status")).to_have_text(
        "Error: The daily limit is a whole number of predictions, 1 or more; leave it empty for no limit."
    )
    limit_field = page.get_by_label("Daily limit (optional)")
    expect(limit_field).to_be_focused()
    expect(limit_field).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#new-key")).to_be_hidden()
    expect(page.locator("#keys")).not_to_contain_text(f"limit {limit}")


def test_an_expired_session_asks_to_sign_in_again_and_keeps_the_page(
    page: Page, demo: DemoCredentials
) -> None:
    # Given: a signed-in page with a half-filled form, then the token stops being accepted
    sign_in(page, demo.email, demo.password)
    page.goto("/api-keys.html")
    expect(page.locator("#keys")).to_contain_text("demo key")
    page.get_by_label("What the key is for").fill("after re-sign-in")
    page.evaluate(
        """() => {
            const s = JSON.parse(sessionStorage.getItem('dashboard.session'));
            s.idToken = s.idToken.slice(0, -4) + 'AAAA';
            sessionStorage.setItem('dashboard.session', JSON.stringify(s));
        }"""
    )
    # When: the API answers 401 and the user signs in again in the dialog
    page.get_by_role("button", name="Create key").click()
    dialog = page.get_by_role("dialog", name="Sign in to continue")
    expect(dialog).to_be_visible()
    expect(dialog.get_by_label("E-mail")).to_have_value(demo.email)
    dialog.get_by_label("Password").fill(demo.password)
    dialog.get_by_role("button", name="Sign in").click()
    # Then: the request that failed is made, on the same page
    expect(page.get_by_role("status")).to_contain_text("Key “after re-sign-in” is created")
    expect(page).to_have_url(re.compile(r"/api-keys\.html$"))


def test_the_api_allows_the_dashboard_origin_only(stack: LocalStack) -> None:
    preflight = {"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization"}
    allowed = httpx.options(
        f"{stack.api_url}/dashboard/api-keys", headers={"Origin": stack.dashboard_url, **preflight}
    )
    other = httpx.options(
        f"{stack.api_url}/dashboard/api-keys", headers={"Origin": "http://127.0.0.1:9", **preflight}
    )
    assert allowed.headers["access-control-allow-origin"] == stack.dashboard_url
    assert "access-control-allow-origin" not in other.headers


def test_keyboard_alone_signs_in_and_creates_a_key(page: Page, demo: DemoCredentials) -> None:
    page.goto("/index.html")
    page.keyboard.press("Tab")
    expect(page.get_by_label("E-mail")).to_be_focused()
    page.keyboard.type(demo.email)
    page.keyboard.press("Tab")
    page.keyboard.type(demo.password)
    page.keyboard.press("Enter")
    page.wait_for_url("**/connection.html")
    page.goto("/api-keys.html")
    page.get_by_label("What the key is for").focus()
    page.keyboard.type("keyboard key")
    page.keyboard.press("Enter")
    expect(page.get_by_role("button", name="Copy key")).to_be_focused()


PAGES = [
    "index.html",
    "api-keys.html",
    "connection.html",
    "connect-callback.html",
    "payments.html",
    "audiences.html",
    "events.html",
    "wizard.html",
    "models.html",
]


@pytest.mark.parametrize("name", PAGES)
def test_every_page_has_no_serious_accessibility_violation_and_is_photographed(
    page: Page, demo: DemoCredentials, screenshots: Path, name: str
) -> None:
    if name != "index.html":
        sign_in(page, demo.email, demo.password)
    page.goto(f"/{name}")
    page.wait_for_load_state("networkidle")
    violations = axe_violations(page)
    for label, size in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(size)
        page.screenshot(path=screenshots / f"{name.removesuffix('.html')}-{label}.png", full_page=True)
    assert not violations, dump(violations)


def _api(page: Page) -> str:
    url: str = page.evaluate("fetch('config.json').then(r => r.json()).then(c => c.apiUrl)")
    return url


def new_user(stack: LocalStack) -> tuple[str, str]:
    """A dashboard user of a new organization, so connection state starts empty."""
    org_id = f"org-{uuid.uuid4().hex[:8]}"
    email = f"{org_id}@example.com"
    _, password = create_user(stack, org_id, email)
    return email, password


def test_connecting_the_sandbox_ad_account_through_the_platform_page(page: Page, stack: LocalStack) -> None:
    # Given
    email, password = new_user(stack)
    sign_in(page, email, password)
    expect(page.get_by_text("Not connected")).to_be_visible()
    # When: Connect, approve on the platform's page, back through connect-callback.html
    page.get_by_role("button", name="Connect an ad account").click()
    page.get_by_role("button", name="Approve").click()
    # Then
    page.wait_for_url("**/connection.html?connected=1")
    expect(page.get_by_role("status")).to_have_text("The ad account is connected.")
    expect(page.locator("#state")).to_have_text("Connected")
    expect(page.locator("#details")).to_contain_text("Ad account")
    # And the code left the address bar and history on the way
    assert "code=" not in page.url


def test_declining_on_the_platform_page_says_what_to_do(page: Page, stack: LocalStack) -> None:
    email, password = new_user(stack)
    sign_in(page, email, password)
    page.get_by_role("button", name="Connect an ad account").click()
    page.get_by_role("button", name="Deny").click()
    page.wait_for_url("**/connect-callback.html")
    status = page.get_by_role("status")
    expect(status).to_contain_text("not approved")
    expect(status).to_contain_text("press Connect on the ad account page")


def test_a_callback_link_without_the_platforms_answer_says_to_start_again(
    page: Page, demo: DemoCredentials
) -> None:
    sign_in(page, demo.email, demo.password)
    page.goto("/connect-callback.html")
    expect(page.get_by_role("status")).to_have_text(
        "Error: This link is missing the platform's answer. Start again with Connect on the ad account page."
    )


def test_disconnecting_asks_first_and_then_shows_not_connected(page: Page, stack: LocalStack) -> None:
    # Given a connected organization
    email, password = new_user(stack)
    sign_in(page, email, password)
    page.get_by_role("button", name="Connect an ad account").click()
    page.get_by_role("button", name="Approve").click()
    page.wait_for_url("**/connection.html?connected=1")
    # When
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Disconnect").click()
    # Then
    expect(page.get_by_role("status")).to_have_text("The ad account is disconnected.")
    expect(page.get_by_role("button", name="Connect an ad account")).to_be_visible()
    # And the details say when, and tell of no expiry of the token it destroyed
    expect(page.locator("#details")).to_contain_text("Disconnected")
    expect(page.locator("#details")).not_to_contain_text("Access expires")


def test_an_audience_is_listed_downloaded_and_deleted(
    page: Page, stack: LocalStack, screenshots: Path
) -> None:
    # Given: a connected organization with a prospecting audience and its lookalike
    email, password = new_user(stack)
    sign_in(page, email, password)
    page.get_by_role("button", name="Connect an ad account").click()
    page.get_by_role("button", name="Approve").click()
    page.wait_for_url("**/connection.html?connected=1")
    buyers = [{"user_id": f"u{i}", "email": f"buyer{i}@example.com", "country": "GB"} for i in range(150)]
    created = httpx.post(
        f"{stack.api_url}/platform-ads/audiences",
        json={
            "name": "Likely buyers",
            "users": buyers,
            "objective": "prospecting",
            "lookalikeSize": 2,
            "lookalikeCountry": "GB",
        },
        headers={"Authorization": f"Bearer {jwt_for(stack, email, password)}"},
        timeout=60,
    )
    assert created.status_code == 201, created.text
    # When
    page.get_by_role("link", name="Audiences").click()
    row = page.get_by_role("row").filter(has_text="Likely buyers")
    # Then
    expect(row).to_contain_text("active")
    expect(row).to_contain_text("150 users")
    expect(row).to_contain_text("prospecting")
    expect(row).to_contain_text("2% in GB")
    for label, size in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(size)
        page.screenshot(path=screenshots / f"audiences-listed-{label}.png", full_page=True)
    page.set_viewport_size(DESKTOP)
    # When: the CSV is downloaded
    with page.expect_download() as download:
        row.get_by_role("button", name="Download CSV of Likely buyers").click()
    csv_text = Path(download.value.path()).read_text(encoding="utf-8-sig")
    assert csv_text.splitlines()[0].startswith("user_id")
    assert len(csv_text.splitlines()) == 151
    # When: deleted after confirming
    page.once("dialog", lambda dialog: dialog.accept())
    row.get_by_role("button", name="Delete Likely buyers").click()
    # Then
    expect(page.get_by_role("status")).to_have_text("“Likely buyers” is deleted.")
    expect(page.locator("#audiences")).not_to_contain_text("Likely buyers")


def test_dismissing_the_delete_question_keeps_the_audience(page: Page, stack: LocalStack) -> None:
    email, password = new_user(stack)
    sign_in(page, email, password)
    page.get_by_role("button", name="Connect an ad account").click()
    page.get_by_role("button", name="Approve").click()
    page.wait_for_url("**/connection.html?connected=1")
    buyers = [{"user_id": f"u{i}", "email": f"buyer{i}@example.com"} for i in range(20)]
    headers = {"Authorization": f"Bearer {jwt_for(stack, email, password)}"}
    created = httpx.post(
        f"{stack.api_url}/platform-ads/audiences",
        json={"name": "Keep me", "users": buyers},
        headers=headers,
        timeout=60,
    )
    assert created.status_code == 201, created.text
    page.goto("/audiences.html")
    page.once("dialog", lambda dialog: dialog.dismiss())
    page.get_by_role("button", name="Delete Keep me").click()
    expect(page.locator("#audiences")).to_contain_text("Keep me")
    listed = httpx.get(f"{stack.api_url}/platform-ads/audiences", headers=headers).json()["audiences"]
    assert [a["name"] for a in listed] == ["Keep me"]


def test_usage_is_charted_per_day_and_listed_per_key_and_model(
    page: Page, stack: LocalStack, demo: DemoCredentials, screenshots: Path
) -> None:
    # Given: predictions made with a new key of the demo organization
    sign_in(page, demo.email, demo.password)
    page.goto("/api-keys.html")
    page.get_by_label("What the key is for").fill("usage chart key")
    page.get_by_role("button", name="Create key").click()
    shown = page.locator("#new-key-value")
    expect(shown).to_have_text(re.compile(r"^\S+_\S+$"))
    body = {"input": {"user_id": demo.sample_user_id, "product_id": demo.sample_product_id}}
    for _ in range(3):
        answer = httpx.post(
            f"{stack.api_url}/client/predict/purchase-likelihood",
            json=body,
            headers={"X-Service-Api-Key": shown.inner_text()},
            timeout=60,
        )
        assert answer.status_code == 200, answer.text
    # When
    page.reload()
    # Then
    row = page.locator("#usage-rows tr").filter(has_text="usage chart key")
    expect(row).to_contain_text("purchase-likelihood")
    expect(row.locator("td").last).to_have_text("3")
    expect(page.locator("#usage-chart li")).not_to_have_count(0)
    page.get_by_label("Model").select_option("purchase-likelihood")
    expect(page.locator("#usage-total")).to_contain_text("model purchase-likelihood")
    for label, size in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(size)
        page.screenshot(path=screenshots / f"api-keys-usage-{label}.png", full_page=True)
