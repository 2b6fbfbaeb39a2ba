"""The Audiences page in a real browser: a segment audience's sync schedule edited in place, and an
audience's size in words."""

from __future__ import annotations

from datetime import datetime, timedelta

import httpx
import pytest
from playwright.sync_api import Page, expect

from local.seed import sign_in as jwt_for
from local.stack import LocalStack
from tests.integration.browser.conftest import ShopUser, axe_violations, dump, sign_in
from tests.integration.browser.test_wizard import connected_user

pytestmark = pytest.mark.integration


def create_segment_audience(
    stack: LocalStack, user: ShopUser, name: str, top: int = 40, **extra: object
) -> dict[str, object]:
    """A segment audience of the purchase model's ``top`` buyers of a product, made through the API."""
    segment = {"modelName": "shop-purchase", "productId": "p00001", "rule": "top_n", "value": top}
    created = httpx.post(
        f"{stack.api_url}/platform-ads/audiences",
        json={"name": name, "segment": segment, **extra},
        headers=user.org.headers,
        timeout=60,
    )
    assert created.status_code == 201, created.text
    body: dict[str, object] = created.json()
    return body


def audience_of(stack: LocalStack, user: ShopUser, audience_id: str) -> dict[str, object]:
    listed = httpx.get(f"{stack.api_url}/platform-ads/audiences", headers=user.org.headers, timeout=30).json()
    [audience] = [a for a in listed["audiences"] if a["audienceId"] == audience_id]
    return audience  # type: ignore[no-any-return]


def test_the_sync_schedule_is_changed_on_the_audiences_page(
    page: Page, stack: LocalStack, synced_user: ShopUser
) -> None:
    # Given: a segment audience, synced daily by default
    audience_id = str(
        create_segment_audience(stack, synced_user, "Schedule me", holdoutPercent=0)["audienceId"]
    )
    sign_in(page, synced_user.email, synced_user.password)
    page.goto("/audiences.html")
    row = page.get_by_role("row").filter(has_text="Schedule me")
    sync = row.get_by_role("cell").nth(6)
    expect(sync).to_contain_text("Daily · next")

    # When: the schedule is opened, set to weekly with a stale model allowed, and saved
    row.get_by_text("Change schedule").click()
    expect(row.get_by_label("How often")).to_have_value("daily")
    expect(row.get_by_label("Sync even when the model is stale")).not_to_be_checked()
    assert not axe_violations(page), dump(axe_violations(page))
    row.get_by_label("How often").select_option("weekly")
    row.get_by_label("Sync even when the model is stale").check()
    row.get_by_role("button", name="Save schedule").click()

    # Then: it says so, the list shows it, and the service holds it: the next sync a week after creation
    expect(page.get_by_role("status")).to_contain_text("“Schedule me” syncs weekly, next")
    expect(page.get_by_role("status")).to_contain_text("even with a stale model")
    expect(sync).to_contain_text("Weekly · even with a stale model · next")
    stored = audience_of(stack, synced_user, audience_id)
    settings = stored["sync"]
    assert isinstance(settings, dict)
    assert (settings["frequency"], settings["allowStaleModel"]) == ("weekly", True)
    created = datetime.fromisoformat(str(stored["createdAt"]))
    assert datetime.fromisoformat(settings["nextSyncAt"]) == created + timedelta(days=7)

    # When: it is turned off, by keyboard, the form showing the saved settings
    row.get_by_text("Change schedule").click()
    expect(row.get_by_label("How often")).to_have_value("weekly")
    expect(row.get_by_label("Sync even when the model is stale")).to_be_checked()
    row.get_by_label("How often").select_option("off")
    row.get_by_label("How often").focus()
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    expect(row.get_by_role("button", name="Save schedule")).to_be_focused()
    page.keyboard.press("Enter")

    # Then: nothing is scheduled any more
    expect(page.get_by_role("status")).to_contain_text("“Schedule me” syncs only when you press Refresh now")
    expect(sync).to_contain_text("Off · even with a stale model")
    expect(sync).not_to_contain_text("next")
    settings = audience_of(stack, synced_user, audience_id)["sync"]
    assert isinstance(settings, dict)
    assert (settings["frequency"], settings["nextSyncAt"]) == ("off", None)


def test_the_size_says_how_many_chosen_users_could_not_be_sent(page: Page, stack: LocalStack) -> None:
    # Given: a list of 20 of whom 3 have no usable e-mail or phone (one neither, one a bad address,
    # one a bad number), made into an audience through the API
    email, password = connected_user(page, stack)
    chosen: list[dict[str, str]] = [{"user_id": f"u{i}", "email": f"buyer{i}@example.com"} for i in range(17)]
    chosen += [
        {"user_id": "u17", "firstName": "Ana"},
        {"user_id": "u18", "email": "not an address"},
        {"user_id": "u19", "phone": "12", "country": "GB"},
    ]
    created = httpx.post(
        f"{stack.api_url}/platform-ads/audiences",
        json={"name": "Partly reachable", "users": chosen},
        headers={"Authorization": f"Bearer {jwt_for(stack, email, password)}"},
        timeout=60,
    )
    assert created.status_code == 201, created.text
    # When
    page.goto("/audiences.html")
    # Then: the size says the 17 sent and why 3 were not (the page showed 17 users and nothing of the
    # 3, while a holdout's lift counted them in its uploaded group: found walking make dev)
    size = page.get_by_role("row").filter(has_text="Partly reachable").get_by_role("cell").nth(2)
    expect(size).to_have_text("17 users · 3 not sent: no usable e-mail or phone")
