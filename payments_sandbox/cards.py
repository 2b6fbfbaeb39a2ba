"""The documented test card numbers and what paying with each does (docs/payments-notes.md §7).

Only the card number decides; any future expiry and any 3-digit CVC are accepted, as in test mode.
A number that fails the Luhn check is "invalid"; a valid number that is not a test card is
declined, because test mode takes test cards only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum


class Outcome(StrEnum):
    SUCCEEDS = "succeeds"
    DECLINED = "declined"
    REQUIRES_AUTHENTICATION = "requires_authentication"
    INVALID = "invalid"


@dataclass(frozen=True)
class CardResult:
    outcome: Outcome
    code: str | None = None
    decline_code: str | None = None
    message: str | None = None
    param: str | None = None
    # A payment that succeeds, then is disputed by the card's bank: the dispute's reason and status.
    dispute: tuple[str, str] | None = None


SUCCEEDS = CardResult(Outcome.SUCCEEDS)
GENERIC_DECLINE = CardResult(Outcome.DECLINED, "card_declined", "generic_decline", "Your card was declined.")
TEST_CARDS: dict[str, CardResult] = {
    "4242424242424242": SUCCEEDS,
    "4000000000000002": GENERIC_DECLINE,
    "4000002500003155": CardResult(Outcome.REQUIRES_AUTHENTICATION),
    # The payment succeeds, then a dispute is opened (docs/payments-notes.md §4.4).
    "4000000000000259": CardResult(Outcome.SUCCEEDS, dispute=("fraudulent", "needs_response")),
    "4000000000002685": CardResult(Outcome.SUCCEEDS, dispute=("product_not_received", "needs_response")),
    "4000000000001976": CardResult(Outcome.SUCCEEDS, dispute=("fraudulent", "warning_needs_response")),
    "4000000000009995": CardResult(
        Outcome.DECLINED, "card_declined", "insufficient_funds", "Your card has insufficient funds."
    ),
}
AUTHENTICATION_FAILED = CardResult(
    Outcome.DECLINED,
    "payment_intent_authentication_failure",
    None,
    "We are unable to authenticate your payment method. Please choose a different payment method and "
    "try again.",
)


def digits(number: str) -> str:
    """The card number without the spaces and dashes people type."""
    return re.sub(r"[\s-]", "", number)


def luhn_valid(number: str) -> bool:
    if not number.isdigit() or not 12 <= len(number) <= 19:
        return False
    total = 0
    for index, char in enumerate(reversed(number)):
        value = int(char)
        if index % 2 == 1:
            value *= 2
            if value > 9:
                value -= 9
        total += value
    return total % 10 == 0


def expiry_valid(expiry: str, now_year: int, now_month: int) -> bool:
    """``MM / YY`` (or ``MM/YY``, ``MM/YYYY``) not in the past."""
    match = re.fullmatch(r"\s*(\d{1,2})\s*/\s*(\d{2}|\d{4})\s*", expiry)
    if match is None:
        return False
    month, year = int(match.group(1)), int(match.group(2))
    year = year + 2000 if year < 100 else year
    return 1 <= month <= 12 and (year, month) >= (now_year, now_month)


def charge(number: str, expiry: str, cvc: str, *, now_year: int, now_month: int) -> CardResult:
    """What paying with this card does."""
    number = digits(number)
    if not luhn_valid(number):
        return CardResult(Outcome.INVALID, "incorrect_number", None, "Your card number is invalid.", "number")
    if not expiry_valid(expiry, now_year, now_month):
        return CardResult(
            Outcome.INVALID, "invalid_expiry_year", None, "Your card's expiration date is invalid.", "exp"
        )
    if not re.fullmatch(r"\d{3,4}", cvc.strip()):
        return CardResult(
            Outcome.INVALID, "invalid_cvc", None, "Your card's security code is invalid.", "cvc"
        )
    return TEST_CARDS.get(
        number,
        CardResult(
            Outcome.DECLINED,
            "card_declined",
            "test_mode_live_card",
            "Your card was declined. Your request was in test mode, but used a non test card.",
        ),
    )
