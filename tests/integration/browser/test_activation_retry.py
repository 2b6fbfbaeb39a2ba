"""Try again after a failed activation, in a real browser: the wizard and the Audiences page show why
it failed and what to do, with a link to the Ad account page, and Try again (after reconnecting)
starts a new attempt through the retry endpoint, which resumes after the last batch the platform
acknowledged: nobody is sent twice."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, Request, expect

from local.connected import ConnectedOrg
from local.seed import sign_in as jwt_for
from local.stack import LocalStack
from tests.integration.browser.conftest import DESKTOP, PHONE, axe_violations, dump, refresh_until
from tests.integration.browser.test_wizard import connected_user
from tests.integration.test_activation_pipeline import (
    accepted_batches,
    assert_everyone_once,
    users,
    wait_until,
)

pytestmark = pytest.mark.integration

USERS = 12_000  # two upload batches: 10,000 and 2,000


def test_try_again_after_reconnecting_resumes_the_failed_activation_and_sends_nobody_twice(
    page: Page, stack: LocalStack, sandbox: httpx.Client, screenshots: Path
) -> None:
    # Given: a connected organization whose activation of a 12,000-user list lost its token after
    # the platform acknowledged the first batch
    email, password = connected_user(page, stack)
    org = ConnectedOrg(email.split("@")[0], {"Authorization": f"Bearer {jwt_for(stack, email, password)}"})
    sandbox.post(
        "/faults",
        json={"kind": "revoke_token", "subcode": 460, "method": "POST", "path": "/users$", "after": 1},
    ).raise_for_status()
    with httpx.Client(base_url=stack.api_url, timeout=60) as api:
        started = api.post(
            "/platform-ads/activations",
            json={"name": "Revoked list", "users": users(USERS, "r")},
            headers=org.headers,
        )
        assert started.status_code == 202, started.text
        audience_id = started.json()["audienceId"]
        failed = wait_until(api, org, audience_id, "failed", "succeeded")
    assert failed["error"]["code"] == "platform_reconnect_required"
    assert failed["progress"]["batchesDone"] == 1
    sandbox.delete("/faults").raise_for_status()

    # When: the user comes back to the wizard, whose draft follows that launch
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
    expect(error).to_contain_text("What to do: Reconnect the ad account.")
    expect(error.get_by_role("link", name="Reconnect on the Ad account page", exact=True)).to_have_attribute(
        "href", "connection.html"
    )

    # When: the Audiences page is opened
    page.goto("/audiences.html")
    row = page.get_by_role("row").filter(has_text="Revoked list")

    # Then: the row says it failed, why, and what to do
    status = row.get_by_role("cell").nth(1)
    expect(status.locator(".badge")).to_have_text("failed")
    expect(status).to_contain_text("What to do:")
    expect(status).to_contain_text("onnect")
    violations = axe_violations(page)
    for label, size in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(size)
        page.screenshot(path=screenshots / f"audiences-failed-activation-{label}.png", full_page=True)
    page.set_viewport_size(DESKTOP)
    assert not violations, dump(violations)

    # When: the user follows the row's link to the Ad account page, connects again, comes back, and
    # presses Try again
    row.get_by_role("link", name="Reconnect on the Ad account page: Revoked list").click()
    expect(page.locator("#state")).to_have_text("Access lost: connect again to restore it")
    expect(page.locator("#details")).to_contain_text("Refused by the platform")
    page.get_by_role("button", name="Connect an ad account").click()
    page.get_by_role("button", name="Approve").click()
    page.wait_for_url("**/connection.html?connected=1")
    page.get_by_role("link", name="Audiences").click()
    posts: list[str] = []
    page.on("request", lambda request: _record_post(request, posts))
    row.get_by_role("button", name="Try again: Revoked list").click()

    # Then: a new attempt starts through the retry endpoint (the original request is not sent again)
    expect(page.get_by_role("status")).to_contain_text("“Revoked list” is being activated again")
    assert posts == [f"{stack.api_url}/platform-ads/activations/{audience_id}/retry"]
    # And: it finishes, shown in the list
    refresh_until(page, lambda: status.locator(".badge").inner_text() == "active")
    expect(status.locator(".badge")).to_have_text("active")
    expect(row.get_by_role("cell").nth(2)).to_have_text(f"{USERS:,} users")
    expect(row.get_by_role("button", name="Try again: Revoked list")).to_have_count(0)

    # And: the platform took batch 1 in the first attempt and batch 2 in the second, once each, and
    # holds every user once
    with httpx.Client(base_url=stack.api_url, timeout=30) as api:
        done = wait_until(api, org, audience_id, "succeeded", "failed")
    assert (done["state"], done["attempt"]) == ("succeeded", 2)
    [seed] = [o["platformId"] for o in done["platformObjects"] if o["kind"] == "custom_audience"]
    assert accepted_batches(sandbox, seed) == [1, 2]
    assert_everyone_once(sandbox, done, USERS)


def _record_post(request: Request, posts: list[str]) -> None:
    if request.method == "POST" and "/platform-ads/" in request.url:
        posts.append(request.url)
