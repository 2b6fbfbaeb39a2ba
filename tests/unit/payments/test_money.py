"""Prices in the provider's smallest currency unit (docs/payments-notes.md §3.5)."""

from __future__ import annotations

import pytest

from shared.payments.money import format_amount, to_minor_units


@pytest.mark.parametrize(
    ("price", "currency", "minor"),
    [
        (12.5, "usd", 1250),  # hundredths
        (0.1 + 0.2, "eur", 30),  # a float's binary error does not leak into the cents
        (1200.0, "jpy", 1200),  # zero-decimal: whole units
        (1.2345, "kwd", 1230),  # three-decimal: thousandths, the last digit 0
        (0.125, "gbp", 13),  # more decimals than the currency: rounded half up
    ],
)
def test_a_products_price_becomes_the_providers_minor_units(price: float, currency: str, minor: int) -> None:
    assert to_minor_units(price, currency) == minor


@pytest.mark.parametrize(
    ("minor", "currency", "shown"),
    [
        (2500, "usd", "$25.00"),
        (1200, "jpy", "¥1,200"),
        (1230, "kwd", "1.230 KWD"),
        (125000, "chf", "1,250.00 CHF"),
    ],
)
def test_an_amount_is_shown_as_a_shopper_reads_it(minor: int, currency: str, shown: str) -> None:
    assert format_amount(minor, currency) == shown
