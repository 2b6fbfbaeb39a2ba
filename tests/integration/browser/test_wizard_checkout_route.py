"""The wizard's destination setup and the hosted quick-pay checkout, in Chromium (issue 22, item 3):
without a payments account taking card payments the route is not offered and the hint says how to
connect one (a link to the Payments page); once payments are connected it is offered, with the
product's checkout address."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Page, expect

from local.payments_browser import connect_payments
from local.stack import LocalStack
from tests.integration.browser.conftest import ShopUser, axe_violations, dump, sign_in

pytestmark = pytest.mark.integration

PRODUCT = "p00001"
LOADED = 30_000  # ms: a function's first answer may take a cold start on a busy machine


@pytest.fixture
def shop(stack: LocalStack, synced_user: ShopUser) -> Iterator[ShopUser]:
    """The session's synced shop; its payments disconnected afterwards, as other tests expect them."""
    yield synced_user
    with httpx.Client(base_url=stack.api_url, timeout=30) as api:
        api.post("/payments/disconnect", headers=synced_user.org.headers)


def to_destination_setup(page: Page) -> None:
    """The wizard on the current data, Publish advert, the product: up to destination setup."""
    page.goto("/wizard.html")
    page.get_by_role("button", name="Use the current data").click()
    page.get_by_role("button", name="Continue to readiness").click()
    page.get_by_role("button", name="Continue", exact=True).click()
    page.get_by_role("radio", name=re.compile("^Publish advert")).check()
    page.get_by_role("button", name="Continue to targeting").click()
    page.get_by_label("Product ID").fill(PRODUCT)
    page.get_by_role("button", name="Continue to destination setup").click()


def test_the_hosted_checkout_is_offered_once_payments_take_card_payments(
    page: Page, stack: LocalStack, shop: ShopUser
) -> None:
    # Given: a synced shop whose payments are not connected
    with httpx.Client(base_url=stack.api_url, timeout=30) as api:
        api.post("/payments/disconnect", headers=shop.org.headers)
    sign_in(page, shop.email, shop.password)
    # When: the wizard reaches destination setup for Publish advert
    to_destination_setup(page)
    # Then: only the product page can be chosen, and the hint says how to offer the hosted checkout
    hint = page.locator("#checkout-route-hint")
    expect(hint).to_contain_text("Only the product page is offered", timeout=LOADED)
    hosted = page.get_by_role("option", name="The hosted quick-pay checkout")
    expect(hosted).to_be_disabled()
    link = hint.get_by_role("link", name="connect a payments account on the Payments page")
    expect(link).to_have_attribute("href", "payments.html")
    assert axe_violations(page) == [], dump(axe_violations(page))

    # When: the merchant connects payments (the provider's onboarding, agreed) and comes back
    connected = connect_payments(stack.api_url, shop.org.headers["Authorization"])
    assert connected.json()["checkoutAvailable"] is True, connected.text
    page.reload()
    # Then: the hosted checkout is offered, with the product's checkout address
    checkout_url = f"{stack.api_url}/checkout/{shop.org.org_id}/{PRODUCT}"
    expect(hint).to_contain_text(checkout_url, timeout=LOADED)
    expect(hosted).to_be_enabled()
    page.get_by_label("Checkout route").select_option("hosted_checkout")
    expect(page.get_by_label("Checkout route")).to_have_value("hosted_checkout")
    assert axe_violations(page) == [], dump(axe_violations(page))
