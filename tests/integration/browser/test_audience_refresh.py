"""Refresh now on the Audiences page: a segment audience is scored again and its members replaced,
and the sync column says how it went."""

from __future__ import annotations

import re

import httpx
import pytest
from playwright.sync_api import Page, expect

from local.stack import LocalStack
from tests.integration.browser.conftest import make_synced_user, refresh_until, sign_in

pytestmark = pytest.mark.integration


def test_refresh_now_scores_a_segment_audience_again_and_says_how_it_went(
    page: Page, stack: LocalStack
) -> None:
    # Given: an organization of its own (its audience sync must not touch the shared one), and an
    # audience of the purchase model's top 50 buyers of a product
    synced_user = make_synced_user(stack)
    segment = {"modelName": "shop-purchase", "productId": "p00001", "rule": "top_n", "value": 50}
    created = httpx.post(
        f"{stack.api_url}/platform-ads/audiences",
        json={"name": "Refresh me", "segment": segment},
        headers=synced_user.org.headers,
        timeout=60,
    )
    assert created.status_code == 201, created.text
    sign_in(page, synced_user.email, synced_user.password)
    page.goto("/audiences.html")
    row = page.get_by_role("row").filter(has_text="Refresh me")
    expect(row.get_by_role("cell").nth(6)).to_contain_text("Daily")

    # When
    row.get_by_role("button", name="Refresh now: Refresh me").click()

    # Then: it runs, and the list shows its outcome
    expect(page.get_by_role("status")).to_contain_text("“Refresh me” is being refreshed")
    expect(row.get_by_role("cell").nth(6)).to_contain_text(re.compile("syncing now|last succeeded"))
    refresh_until(page, lambda: "last succeeded" in row.get_by_role("cell").nth(6).inner_text())
    expect(row.get_by_role("cell").nth(6)).to_contain_text("last succeeded")
