"""The hosted checkout through the local gateway and the payments sandbox (issue 22, item 3): a public
page per organization and product, priced from the synced products file, that starts a Checkout Session
on the organization's connected account and sends the shopper to the provider's page; every product or
organization that cannot be sold gets a clear page, never an error."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest

from local.payments_browser import connect_payments, onboard, post_payments_callback
from local.stack import LocalStack
from shared import wiring
from tests.integration.payments_shop import (
    PRODUCTS,
    PaymentsShop,
    new_user,
    shop_taking_payments,
    sync_products,
)

pytestmark = pytest.mark.integration


def checkout(org_id: str, product_id: str) -> str:
    return f"/checkout/{org_id}/{product_id}"


def start(api: httpx.Client, org_id: str, product_id: str, quantity: str = "2") -> httpx.Response:
    """What the product page's form sends."""
    return api.post(
        checkout(org_id, product_id),
        content=f"quantity={quantity}",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )


def session_of(payments: httpx.Client, session_id: str) -> dict[str, Any]:
    [held] = [s for s in payments.get("/state").json()["checkout_sessions"] if s["id"] == session_id]
    return dict(held)


def test_the_product_page_shows_the_synced_name_and_price_and_asks_for_a_quantity(
    api: httpx.Client, shop: PaymentsShop
) -> None:
    # When: a shopper opens the product's checkout link (no credentials)
    page = api.get(checkout(shop.org.org_id, "p-mug"), params={"quantity": "3"})
    # Then: the page names the shop, the product and its price, with the quantity asked for
    assert page.status_code == 200, page.text
    assert page.headers["content-type"].startswith("text/html")
    assert "Ada&#x27;s Mug" in page.text
    assert "$12.50" in page.text
    assert "Ada&#x27;s Mugs" in page.text
    assert re.search(r'<input id="quantity" name="quantity" type="number"[^>]* value="3"', page.text)
    # And it holds no card field: paying happens on the provider's page
    assert "card" not in re.sub(r"<p class=\"hint\">.*?</p>", "", page.text).lower()
    assert page.headers["content-security-policy"].startswith("default-src 'none'")


def test_paying_starts_a_session_on_the_organizations_account_and_sends_the_shopper_there(
    api: httpx.Client, shop: PaymentsShop, stack: LocalStack, payments: httpx.Client
) -> None:
    # When: the shopper asks for two mugs
    answered = start(api, shop.org.org_id, "p-mug", "2")
    # Then: the browser goes to the provider's hosted page for a new session
    assert answered.status_code == 303, answered.text
    location = answered.headers["location"]
    assert location.startswith(f"{stack.payments.url}/c/pay/cs_test_")
    session_id = location.rsplit("/", 1)[1]
    session = session_of(payments, session_id)
    # priced from the products file (never the address), in the account's currency, on its account
    assert (session["amount_total"], session["currency"], session["status"]) == (2500, "usd", "open")
    connection = wiring.payments_store().get_connection(shop.org.org_id)
    assert connection is not None
    account = wiring.payments_connection_status().account_id(connection)
    assert session["account"] == account
    items = httpx.get(
        f"{stack.payments.url}/v1/checkout/sessions/{session_id}/line_items",
        headers={"Authorization": f"Bearer {stack.payments.config.secret_key}", "Stripe-Account": account},
    ).json()["data"]
    assert [(item["description"], item["quantity"], item["price"]["unit_amount"]) for item in items] == [
        ("Ada's Mug", 2, 1250)
    ]
    [logged] = payments.get("/requests", params={"path": "^/v1/checkout/sessions$"}).json()["requests"][-1:]
    # and the checkout saved first names the session's idempotency key and comes back to the pages
    checkout_id = session["client_reference_id"]
    assert logged["idempotency_key"] == f"checkout-session-{checkout_id}"
    assert session["metadata"] == {
        "org_id": shop.org.org_id,
        "checkout_id": checkout_id,
        "product_id": "p-mug",
    }
    assert session["success_url"].startswith(f"{stack.api_url}{checkout(shop.org.org_id, 'p-mug')}/paid")
    record = wiring.payments_store().get_checkout(shop.org.org_id, checkout_id)
    assert record is not None
    assert (record.state, record.session_id, record.amount_total, record.quantity) == (
        "open",
        session_id,
        2500,
        2,
    )


def test_a_price_name_or_currency_in_the_address_or_the_form_is_not_used(
    api: httpx.Client, shop: PaymentsShop, stack: LocalStack, payments: httpx.Client
) -> None:
    # When: a shopper's request carries its own price, name and currency, in the address and the form
    answered = api.post(
        checkout(shop.org.org_id, "p-mug"),
        params={"price": "0.01", "unit_amount": "1", "currency": "eur", "name": "Free mug"},
        content="quantity=1&price=0.01&unit_amount=1&amount=1&currency=eur&name=Free+mug",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    # Then: the session is the products file's mug at its price, in the account's currency
    assert answered.status_code == 303, answered.text
    session = session_of(payments, str(answered.headers["location"]).rsplit("/", 1)[1])
    assert (session["amount_total"], session["currency"]) == (1250, "usd")
    connection = wiring.payments_store().get_connection(shop.org.org_id)
    assert connection is not None
    items = httpx.get(
        f"{stack.payments.url}/v1/checkout/sessions/{session['id']}/line_items",
        headers={
            "Authorization": f"Bearer {stack.payments.config.secret_key}",
            "Stripe-Account": wiring.payments_connection_status().account_id(connection),
        },
    ).json()["data"]
    assert [(i["description"], i["quantity"], i["price"]["unit_amount"]) for i in items] == [
        ("Ada's Mug", 1, 1250)
    ]


def test_a_product_the_organization_does_not_sell_gets_a_not_found_page(
    api: httpx.Client, shop: PaymentsShop
) -> None:
    for answered in (
        api.get(checkout(shop.org.org_id, "p-nothing")),
        start(api, shop.org.org_id, "p-nothing"),
    ):
        assert answered.status_code == 404, answered.text
        assert "Product not found" in answered.text
        assert answered.headers["content-type"].startswith("text/html")


def test_another_organizations_product_id_in_the_path_is_not_sold_here(
    api: httpx.Client, shop: PaymentsShop, stack: LocalStack
) -> None:
    # Given: another organization sells a product its catalogue alone has
    other = shop_taking_payments(stack, business_name="Other Shop")
    products = PRODUCTS + b"p-only-other,Lamp,home,99\n"
    with httpx.Client(base_url=stack.api_url, timeout=60) as client:
        sync_products(client, other.org, products)
    assert api.get(checkout(other.org.org_id, "p-only-other")).status_code == 200
    # When: its product id is put in the first organization's checkout path
    page = api.get(checkout(shop.org.org_id, "p-only-other"))
    paying = start(api, shop.org.org_id, "p-only-other")
    # Then: it is not sold here, and no session is started
    assert (page.status_code, paying.status_code) == (404, 404)
    assert "location" not in paying.headers


def test_a_product_without_a_price_is_not_for_sale(api: httpx.Client, shop: PaymentsShop) -> None:
    page = api.get(checkout(shop.org.org_id, "p-gift"))
    assert page.status_code == 404, page.text
    assert "Not for sale here" in page.text
    assert "has not given it a price" in page.text
    assert start(api, shop.org.org_id, "p-gift").status_code == 404


def test_an_organization_that_takes_no_card_payments_gets_a_clear_page(
    api: httpx.Client, stack: LocalStack
) -> None:
    # Given: an organization with its products synced but no payments account
    org, _, _ = new_user(stack)
    sync_products(api, org)
    for answered in (api.get(checkout(org.org_id, "p-mug")), start(api, org.org_id, "p-mug")):
        assert answered.status_code == 404, answered.text
        assert "not taking card payments" in answered.text
    # And one whose account's set-up is not finished (charges not enabled) is no different
    later = onboard(
        api.post("/payments/connect", headers=org.headers).json()["onboardingUrl"], decision="later"
    )
    assert (
        post_payments_callback(later.headers["location"], stack.api_url, org.headers["Authorization"]).json()[
            "status"
        ]
        == "onboarding"
    )
    assert api.get(checkout(org.org_id, "p-mug")).status_code == 404
    # Until it is finished
    assert connect_payments(stack.api_url, org.headers["Authorization"]).json()["checkoutAvailable"] is True
    assert api.get(checkout(org.org_id, "p-mug")).status_code == 200


def test_an_unknown_organization_gets_the_same_clear_page(api: httpx.Client) -> None:
    answered = api.get(checkout("org-that-does-not-exist", "p-mug"))
    assert answered.status_code == 404, answered.text
    assert "not taking card payments" in answered.text


@pytest.mark.parametrize("quantity", ["0", "100", "two", "", "-1", "1e3"])
def test_a_quantity_out_of_range_is_asked_again(api: httpx.Client, shop: PaymentsShop, quantity: str) -> None:
    answered = start(api, shop.org.org_id, "p-mug", quantity)
    assert answered.status_code == 400, answered.text
    assert 'role="alert"' in answered.text
    assert "Enter a quantity from 1 to 99." in answered.text


def test_a_provider_that_does_not_answer_gets_a_try_again_page_and_nothing_is_charged(
    api: httpx.Client, shop: PaymentsShop, payments: httpx.Client
) -> None:
    # Given: the provider fails every attempt
    payments.post("/faults", json={"kind": "unavailable", "path": "^/v1/checkout/sessions$", "count": 5})
    # When
    answered = start(api, shop.org.org_id, "p-teapot", "1")
    # Then
    assert answered.status_code == 503, answered.text
    assert "could not be opened" in answered.text
    assert "Nothing was charged" in answered.text


def test_the_pages_after_paying_and_after_cancelling(api: httpx.Client, shop: PaymentsShop) -> None:
    paid = api.get(f"{checkout(shop.org.org_id, 'p-mug')}/paid", params={"session_id": "cs_test_x"})
    assert paid.status_code == 200
    assert "Thank you for your order" in paid.text
    assert "Ada&#x27;s Mugs" in paid.text
    cancelled = api.get(f"{checkout(shop.org.org_id, 'p-mug')}/cancelled")
    assert cancelled.status_code == 200
    assert "nothing was charged" in cancelled.text
    # its way back is relative to the cancelled page: the product's own
    assert 'href="../p-mug"' in cancelled.text
