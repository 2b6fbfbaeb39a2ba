"""The dashboard's Account page in a real browser (Debian's Chromium) against the local stack:
closing the account after typing the organization's name, its progress and result, scanned by
axe-core and photographed at desktop and phone widths (issue 9, item 12)."""

from __future__ import annotations

import uuid
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from local.platform_browser import consent
from local.seed import create_user
from local.seed import sign_in as jwt_for
from local.stack import LocalStack
from shared import wiring
from tests.integration.browser.conftest import DESKTOP, PHONE, axe_violations, dump, sign_in
from tests.integration.patience import BACKGROUND_JOB_MS
from tests.integration.test_sample_events import sample_body

pytestmark = pytest.mark.integration


def connected_user(stack: LocalStack) -> tuple[str, str, str, dict[str, str]]:
    """A user of a new organization with a connected ad account and one audience on the platform:
    (e-mail, password, organization name, API headers)."""
    org_id = f"org-{uuid.uuid4().hex[:8]}"
    email = f"{org_id}@example.com"
    _, password = create_user(stack, org_id, email)
    headers = {"Authorization": f"Bearer {jwt_for(stack, email, password)}"}
    with httpx.Client(base_url=stack.api_url, timeout=60) as api:
        url = api.post("/platform-ads/connect", headers=headers).json()["authorizationUrl"]
        assert consent(url, stack.api_url, headers["Authorization"]).status_code == 200
        body = {**sample_body("create_audience"), "name": "Likely buyers"}
        assert api.post("/platform-ads/audiences", json=body, headers=headers).status_code == 201
    name = wiring.organization_store().name_of(org_id)
    assert name is not None
    return email, password, name, headers


def photograph(page: Page, screenshots: Path, name: str) -> None:
    for label, size in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(size)
        page.screenshot(path=screenshots / f"{name}-{label}.png", full_page=True)
    page.set_viewport_size(DESKTOP)


def test_the_account_is_closed_after_typing_its_name_with_progress_and_result(
    page: Page, stack: LocalStack, screenshots: Path
) -> None:
    # Given: a signed-in user of a connected organization with an audience, on the Account page
    email, password, name, headers = connected_user(stack)
    sign_in(page, email, password)
    page.get_by_role("link", name="Account", exact=True).click()
    expect(page.get_by_text(f"You are signed in to {name}.")).to_be_visible()
    violations = axe_violations(page)
    photograph(page, screenshots, "account")
    assert not violations, dump(violations)

    # When: another name is typed
    page.get_by_label("Type the organization's name").fill(f"{name} Ltd")
    page.get_by_role("button", name="Close account and delete all data").click()

    # Then: refused next to the field, saying why and what to type; nothing is deleted
    alert = page.locator("#confirm-error")
    expect(alert).to_contain_text("not the organization's name, so nothing was deleted")
    expect(alert).to_contain_text(f"exactly as shown ({name})")
    expect(page.get_by_label("Type the organization's name")).to_have_attribute("aria-invalid", "true")
    assert httpx.get(f"{stack.api_url}/platform-ads/audiences", headers=headers).status_code == 200

    # When: the name is typed right, platform audiences included
    page.get_by_label("Also delete this organization's audiences").check()
    page.get_by_label("Type the organization's name").fill(name)
    page.get_by_role("button", name="Close account and delete all data").click()

    # Then: the deletion shows its steps, and ends closed with what it deleted
    expect(page.locator("#progress-card")).to_be_visible()
    expect(page.locator("#closure-state")).to_contain_text("Closed on", timeout=BACKGROUND_JOB_MS)
    expect(page.get_by_role("status")).to_have_text("The account is closed and its data deleted.")
    expect(page.locator("#phases li")).to_have_count(7)
    expect(page.locator("#phases")).not_to_contain_text("Waiting")
    expect(page.locator("#phases li").filter(has_text="on the platform")).to_contain_text("1 deleted")
    expect(page.locator("#close-card")).to_be_hidden()
    expect(page.locator("#closure-progress")).to_have_attribute("value", "7")
    expect(page.get_by_text("This account is closed")).to_be_visible()
    violations = axe_violations(page)
    photograph(page, screenshots, "account-closed")
    assert not violations, dump(violations)
    # And the organization is gone for the API as well
    assert httpx.get(f"{stack.api_url}/platform-ads/audiences", headers=headers).status_code == 403

    # When: the page is opened again later
    page.reload()
    # Then: it still says the account is closed
    expect(page.get_by_text("This account is closed")).to_be_visible()
    expect(page.locator("#closure-state")).to_contain_text("Closed on")

    # When: the session, which outlives the organization, opens another page
    page.get_by_role("link", name="Audiences").click()
    # Then: it lands on a page that says the account was closed, not on an error or "Loading…"
    expect(page.get_by_role("heading", name="This account was closed")).to_be_visible()
    assert page.url.endswith("/closed.html")
    violations = axe_violations(page)
    photograph(page, screenshots, "account-closed-session")
    assert not violations, dump(violations)
    # And signing in again is refused: the user is deleted from the user pool
    page.get_by_role("link", name="Sign in with another account").click()
    page.get_by_label("E-mail").fill(email)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_have_text(
        "The e-mail or password is wrong. Check both and try again."
    )


def test_a_closure_that_stopped_says_what_to_do_and_resumes(
    page: Page, stack: LocalStack, sandbox: httpx.Client, screenshots: Path
) -> None:
    # Given: the platform refuses to delete audiences for now
    email, password, name, _ = connected_user(stack)
    sandbox.post("/faults", json={"kind": "transient", "method": "DELETE", "path": ".*", "count": 50})
    sign_in(page, email, password, then="connection.html")
    page.goto("/account.html")
    # When: the account is closed with its platform audiences
    page.get_by_label("Also delete this organization's audiences").check()
    page.get_by_label("Type the organization's name").fill(name)
    page.get_by_role("button", name="Close account and delete all data").click()
    # Then: it stops at the platform step with the reason and what to do
    expect(page.locator("#closure-failure")).to_be_visible(timeout=BACKGROUND_JOB_MS)
    expect(page.locator("#closure-state")).to_contain_text("Closing stopped")
    expect(page.locator("#closure-remedy")).to_contain_text("resume the closure")
    violations = axe_violations(page)
    photograph(page, screenshots, "account-closure-stopped")
    assert not violations, dump(violations)
    # When: the person resumes, keeping the platform audiences
    page.get_by_role("button", name="Resume, keep platform audiences").click()
    # Then: it completes, the platform step not asked for
    expect(page.locator("#closure-state")).to_contain_text("Closed on", timeout=BACKGROUND_JOB_MS)
    expect(page.locator("#phases li").filter(has_text="on the platform")).to_contain_text("Not asked for")
