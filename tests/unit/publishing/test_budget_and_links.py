"""Budgets in the ad account's minor units, UTM tagging and the checkout link template."""

from __future__ import annotations

from decimal import Decimal
from urllib.parse import parse_qs, urlsplit

import pytest

from shared.errors import ValidationFailed
from shared.publishing.budget import to_minor_units
from shared.publishing.links import check_checkout_template, checkout_link, with_utm

ALLOWED = ("buy.stripe.com", "checkout.stripe.com")


@pytest.mark.parametrize(
    ("amount", "currency", "minor"),
    [("20.00", "GBP", 2000), ("19.99", "USD", 1999), ("1500", "JPY", 1500), ("25000", "KRW", 25000)],
)
def test_a_budget_becomes_minor_units_by_the_currency_offset(amount: str, currency: str, minor: int) -> None:
    # When / Then: offset 100 for most currencies, 1 without minor units (docs/platform-notes.md §6.3)
    assert to_minor_units(Decimal(amount), currency) == minor


def test_a_budget_with_more_decimals_than_the_currency_is_refused_not_rounded() -> None:
    # When a yen budget has decimals
    with pytest.raises(ValidationFailed) as raised:
        to_minor_units(Decimal("1500.5"), "JPY")
    # Then the field and the rule are named
    assert raised.value.field == "dailyBudget"
    assert "no decimals" in raised.value.message


def test_a_budget_below_the_account_minimum_names_the_minimum_in_the_currency() -> None:
    # When the budget is under the ad account's minimum daily budget (100 minor units)
    with pytest.raises(ValidationFailed) as raised:
        to_minor_units(Decimal("0.50"), "GBP", minimum=100)
    # Then the message gives the minimum in pounds
    assert "minimum daily budget of 1 GBP" in raised.value.message


def test_utm_parameters_name_the_campaign_and_audience_and_keep_other_parameters() -> None:
    # When a product page with its own query and an old UTM value is tagged
    tagged = with_utm(
        "https://shop.example.com/p/1?ref=x&utm_source=old", campaign="Spring", audience="Buyers"
    )
    # Then the other parameter stays and the UTM values are ours
    query = parse_qs(urlsplit(tagged).query)
    assert query == {
        "ref": ["x"],
        "utm_source": ["meta"],
        "utm_medium": ["paid_social"],
        "utm_campaign": ["Spring"],
        "utm_content": ["Buyers"],
    }


def test_a_checkout_link_is_built_per_product_with_the_id_encoded() -> None:
    # Given a payment provider's link template
    template = check_checkout_template("https://buy.stripe.com/shop?ref={product_id}", ALLOWED)
    # When the link of a product with reserved characters is built
    link = checkout_link(template, "sku 1/&x", ALLOWED)
    # Then the id cannot change the link's structure
    assert link == "https://buy.stripe.com/shop?ref=sku%201%2F%26x"


@pytest.mark.parametrize(
    ("template", "reason"),
    [
        ("https://buy.stripe.com/shop", "must contain {product_id}"),
        ("http://buy.stripe.com/{product_id}", "https"),
        ("https://evil.example.com/{product_id}", "not an allowed checkout domain"),
        ("https://buy.stripe.com.evil.example/{product_id}", "not an allowed checkout domain"),
        ("https://user:pw@buy.stripe.com/{product_id}", "without credentials"),
    ],
)
def test_a_checkout_template_must_be_https_on_an_allowed_domain(template: str, reason: str) -> None:
    # When / Then
    with pytest.raises(ValidationFailed) as raised:
        check_checkout_template(template, ALLOWED)
    assert raised.value.field == "template"
    assert reason in raised.value.message


def test_a_subdomain_of_an_allowed_domain_is_allowed() -> None:
    assert check_checkout_template("https://eu.checkout.stripe.com/{product_id}", ALLOWED)
