"""A permissions error's remedy ("... then reconnect the ad account on the Ad account page") comes with
the link to that page, in the wizard and on the Audiences page, as the token-revoked one does: the
platform refuses the activation's audience with its permissions code (200), the merchant sees what to
do and where."""

from __future__ import annotations

import httpx
import pytest
from playwright.sync_api import Page, expect

from local.connected import ConnectedOrg
from local.seed import sign_in as jwt_for
from local.stack import LocalStack
from tests.integration.browser.test_wizard import connected_user
from tests.integration.test_activation_pipeline import users, wait_until

pytestmark = pytest.mark.integration

LOADED = 30_000  # ms: a function's first answer may take a cold start on a busy machine


def test_a_permissions_error_links_to_the_ad_account_page(
    page: Page, stack: LocalStack, sandbox: httpx.Client
) -> None:
    # Given: an activation whose audience the platform refuses for lack of permission (code 200)
    email, password = connected_user(page, stack)
    org = ConnectedOrg(email.split("@")[0], {"Authorization": f"Bearer {jwt_for(stack, email, password)}"})
    sandbox.post(
        "/faults",
        json={"kind": "error", "method": "POST", "path": "customaudiences$", "code": 200, "http_status": 403},
    ).raise_for_status()
    try:
        with httpx.Client(base_url=stack.api_url, timeout=60) as api:
            started = api.post(
                "/platform-ads/activations",
                json={"name": "Refused list", "users": users(3, "d")},
                headers=org.headers,
            )
            assert started.status_code == 202, started.text
            audience_id = started.json()["audienceId"]
            failed = wait_until(api, org, audience_id, "failed", "succeeded")
    finally:
        sandbox.delete("/faults").raise_for_status()
    assert failed["state"] == "failed", failed
    assert failed["error"]["code"] == "platform_permissions", failed["error"]
    # When: the merchant comes back to the wizard's activation step of that launch
    page.goto("/audiences.html")
    page.evaluate(
        "([key, draft]) => localStorage.setItem(key, JSON.stringify(draft))",
        [
            f"dashboard.wizard.{email}",
            {"step": "activation", "state": {"reached": 6, "audienceId": audience_id}, "fields": {}},
        ],
    )
    page.goto("/wizard.html#activation")
    # Then: the wizard says what to do, with a link to the page where it is done
    error = page.locator("#activation-error")
    expect(error).to_contain_text("then reconnect the ad account on the Ad account page.", timeout=LOADED)
    expect(error.get_by_role("link", name="Reconnect on the Ad account page", exact=True)).to_have_attribute(
        "href", "connection.html"
    )
    # And the Audiences page's row links there too
    page.goto("/audiences.html")
    row = page.get_by_role("row").filter(has_text="Refused list")
    expect(row.get_by_role("link", name="Reconnect on the Ad account page: Refused list")).to_have_attribute(
        "href", "connection.html", timeout=LOADED
    )
