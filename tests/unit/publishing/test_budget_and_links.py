"""Budgets in the ad account's minor units and UTM tagging."""

from __future__ import annotations

from decimal import Decimal
from urllib.parse import parse_qs, urlsplit

import pytest

from shared.errors import ValidationFailed
from shared.publishing.budget import to_minor_units
from shared.publishing.links import with_utm


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
