"""Phone numbers of every country, read with libphonenumber's numbering plans (its Python port,
``phonenumbers``): a number written as its country writes it becomes its international form
(docs/platform-notes.md §3.7: digits only, with the country code).

Only the code that normalises phones imports this module, when it first meets a phone, so the
predict path never loads the library (``tests/unit/audiences/test_phones.py`` checks it). The layer
carries ``phonenumberslite``: the same parser and plans without the geocoder and carrier data.
"""

from __future__ import annotations

from dataclasses import dataclass

import phonenumbers
from phonenumbers import NumberParseException, PhoneNumberFormat, ValidationResult

# Why a number is not read, as the values of the drop reasons the quality report counts
# (identifiers.DropReason; plain strings so that this module, which identifiers imports, imports
# nothing of the library back).
TOO_SHORT = "phone_too_short"
TOO_LONG = "phone_too_long"
UNKNOWN_COUNTRY_CODE = "unknown_country_code"
INVALID = "invalid_phone"
_PARSE_REASONS = {
    NumberParseException.INVALID_COUNTRY_CODE: UNKNOWN_COUNTRY_CODE,
    NumberParseException.NOT_A_NUMBER: INVALID,
    NumberParseException.TOO_SHORT_AFTER_IDD: TOO_SHORT,
    NumberParseException.TOO_SHORT_NSN: TOO_SHORT,
    NumberParseException.TOO_LONG: TOO_LONG,
}
# Why a parsed number is not one the plan allows (lengths only: a number in a range the plan does not
# list yet, or a test number such as Meta's own 555 example, is still sent).
_LENGTH_REASONS = {
    ValidationResult.INVALID_COUNTRY_CODE: UNKNOWN_COUNTRY_CODE,
    ValidationResult.TOO_SHORT: TOO_SHORT,
    ValidationResult.TOO_LONG: TOO_LONG,
    ValidationResult.INVALID_LENGTH: INVALID,
    ValidationResult.IS_POSSIBLE_LOCAL_ONLY: INVALID,  # no area code
}
_REGIONS = phonenumbers.SUPPORTED_REGIONS


@dataclass(frozen=True, slots=True)
class Phone:
    """A readable phone number: ``digits`` as the platform hashes them (country code first, no
    ``+``); :meth:`international` writes it as people do (``+44 7700 900065``)."""

    digits: str
    number: phonenumbers.PhoneNumber

    def international(self) -> str:
        # Formatting costs as much as a third of reading a number, so only callers that show it pay.
        return phonenumbers.format_number(self.number, PhoneNumberFormat.INTERNATIONAL)


def read_phone(text: str, country: str | None) -> Phone | str:
    """The number ``text`` (stripped, not blank) names, read with the plan of ``country`` (ISO alpha-2,
    either case: the customer's country, else the store's) when it is written nationally.

    A number with a country code (``+44 ...``, or the country's international prefix as in
    ``0044 ...`` or ``011 44 ...``) is read as that country's whatever ``country`` says. Without a
    country (or with one that has no numbering plan), a number is taken to carry its country code, as
    the platform requires of a phone sent without ``COUNTRY``: leading zeros of an international prefix
    go, and a national number (one leading ``0``) cannot be placed (``UNKNOWN_COUNTRY_CODE``). A number
    not read is the value of its drop reason (``identifiers.DropReason``).
    """
    region = country.upper() if country else None
    if region not in _REGIONS:
        region = None
        if not text.startswith("+"):
            digits = phonenumbers.normalize_digits_only(text)
            if digits.startswith("0") and not digits.startswith("00"):
                return UNKNOWN_COUNTRY_CODE
            text = "+" + digits.lstrip("0")
    try:
        number = phonenumbers.parse(text, region)
    except NumberParseException as exc:
        return _PARSE_REASONS.get(exc.error_type, INVALID)
    possible = phonenumbers.is_possible_number_with_reason(number)
    if possible != ValidationResult.IS_POSSIBLE:
        return _LENGTH_REASONS.get(possible, INVALID)
    # E.164 without its "+": the country code, then the national significant number (Italy's leading
    # zero kept, as libphonenumber keeps it).
    digits = f"{number.country_code}{phonenumbers.national_significant_number(number)}"
    return Phone(digits=digits, number=number)
