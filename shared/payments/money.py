"""Prices in the provider's smallest currency unit, and shown to a shopper.

The provider takes ``unit_amount`` as an integer in the currency's minor units: hundredths for most
currencies, whole units for the zero-decimal ones, thousandths for the three-decimal ones, whose last
digit must be 0 (docs/payments-notes.md §3.5).
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

ZERO_DECIMAL = frozenset(
    {
        "bif",
        "clp",
        "djf",
        "gnf",
        "jpy",
        "kmf",
        "krw",
        "mga",
        "pyg",
        "rwf",
        "ugx",
        "vnd",
        "vuv",
        "xaf",
        "xof",
        "xpf",
    }
)
THREE_DECIMAL = frozenset({"bhd", "jod", "kwd", "omr", "tnd"})
SYMBOLS = {"usd": "$", "eur": "€", "gbp": "£", "cad": "CA$", "aud": "A$", "jpy": "¥"}


def minor_unit_factor(currency: str) -> int:
    code = currency.lower()
    return 1 if code in ZERO_DECIMAL else 1000 if code in THREE_DECIMAL else 100


def to_minor_units(price: float, currency: str) -> int:
    """``price`` (in units of ``currency``, as the products file has it) in minor units, rounded half
    up to what the currency can charge (three-decimal currencies to a multiple of 10)."""
    factor = minor_unit_factor(currency)
    step = Decimal(10) if factor == 1000 else Decimal(1)
    minor = (Decimal(repr(price)) * factor / step).quantize(Decimal(1), rounding=ROUND_HALF_UP) * step
    return int(minor)


def format_amount(minor: int, currency: str) -> str:
    """``minor`` units of ``currency`` as a shopper reads them: ``$25.00``, ``¥1,200``, ``12.50 CHF``."""
    code = currency.lower()
    factor = minor_unit_factor(code)
    places = {1: 0, 100: 2, 1000: 3}[factor]
    value = f"{Decimal(minor) / factor:,.{places}f}"
    symbol = SYMBOLS.get(code)
    return f"{symbol}{value}" if symbol else f"{value} {code.upper()}"
