"""Money as the platform wants it: budgets in the minor units of the ad account's currency.

The platform takes ``daily_budget`` as an integer in the currency's minor units, using an *offset*
of 100 for most currencies and 1 for those without minor units (docs/platform-notes.md §6.3).
The conversion is exact: a budget with more decimals than the currency has is refused, not rounded.
"""

from __future__ import annotations

from decimal import Decimal

from shared.errors import PreconditionFailed, ValidationFailed

# Currencies whose offset is 1 (docs/platform-notes.md §6.3); every other currency has offset 100.
OFFSET_ONE_CURRENCIES = frozenset(
    {"CLP", "COP", "CRC", "HUF", "ISK", "IDR", "JPY", "KRW", "PYG", "TWD", "VND"}
)


def currency_offset(currency: str) -> int:
    """How many minor units make one unit of ``currency`` on the platform (1 or 100)."""
    if len(currency) != 3 or not currency.isalpha():
        raise PreconditionFailed(
            f"The ad account reports an unknown currency ({currency or 'none'}).",
            remedy="Check the ad account's currency in the platform's settings, then retry.",
        )
    return 1 if currency.upper() in OFFSET_ONE_CURRENCIES else 100


def to_minor_units(amount: Decimal, currency: str, *, minimum: int | None = None) -> int:
    """``amount`` (in units of ``currency``) as platform minor units, checked against ``minimum``.

    Raises ``ValidationFailed`` (field ``dailyBudget``) when the amount has more decimals than the
    currency, or is below the ad account's minimum daily budget.
    """
    offset = currency_offset(currency)
    minor = amount * offset
    if minor != minor.to_integral_value():
        places = "no decimals" if offset == 1 else "at most 2 decimals"
        raise ValidationFailed(
            f"dailyBudget: {amount} {currency} cannot be charged exactly; {currency} budgets take {places}.",
            field="dailyBudget",
            remedy=f"Send the daily budget in {currency} with {places}.",
        )
    units = int(minor)
    if minimum is not None and units < minimum:
        lowest = Decimal(minimum) / offset
        raise ValidationFailed(
            f"dailyBudget: {amount} {currency} is below the ad account's minimum daily budget of "
            f"{lowest} {currency}.",
            field="dailyBudget",
            remedy=f"Set a daily budget of at least {lowest} {currency}.",
        )
    return units
