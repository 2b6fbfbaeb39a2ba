"""Phone numbers of every country, read with libphonenumber's numbering plans (its Python port,
``phonenumbers``): a number written as its country writes it becomes its international form
(docs/platform-notes.md §3.7: digits only, with the country code).

Only the code that normalises phones imports this module, when it first meets a phone, so the
predict path never loads the library (``tests/unit/audiences/test_phones.py`` checks it). The layer
carries ``phonenumberslite``: the same parser and plans without the geocoder and carrier data.
"""

from __future__ import annotations

import re
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


# --- the plans as tables, for the engine (shared.activation.hashing) ---------------------------------


@dataclass(frozen=True, slots=True)
class NumberingPlan:
    """What ``phonenumbers.parse`` reads of one plan (a region's, or a non-geographic calling code's):
    its calling code, its international (IDD) and national prefixes as patterns anchored at the start
    of the digits (``None``: the plan has none), whether a national prefix is rewritten rather than
    dropped (Argentina's 15, Japan's) when the prefix pattern's last group (``last_group``, its
    number; never empty when it takes part: ``tests/unit/audiences/test_phones.py``) takes part, the
    pattern a national number must match in full to be viable (``None``: none is), and per length of
    a national number (0 to 17 digits) whether a number stripped of its national prefix may keep that
    length (not too short, local only or of a length the plan lacks) and why a number of that length
    is not possible (``None``: possible)."""

    key: str
    country_code: int
    international_prefix: str | None
    national_prefix: str | None
    transforms: bool
    last_group: int
    general_pattern: str | None
    strip_lengths: tuple[int, ...]
    length_reasons: tuple[str | None, ...]


# The longest national number parse accepts (libphonenumber's _MAX_LENGTH_FOR_NSN).
MAX_NATIONAL_DIGITS = 17


def calling_codes() -> dict[int, str]:
    """Every country calling code and the key of its main plan (``phone_plans.numbering_plans``): the plan
    ``parse`` reads a number with that code by (``1`` -> ``US``, ``800`` -> ``800``)."""
    return {code: _main_key(code) for code in phonenumbers.COUNTRY_CODE_TO_REGION_CODE}


def _main_key(code: int) -> str:
    region = phonenumbers.region_code_for_country_code(code)
    return str(code) if region == phonenumbers.REGION_CODE_FOR_NON_GEO_ENTITY else region


_NOT_STRIPPED = (
    ValidationResult.TOO_SHORT,
    ValidationResult.IS_POSSIBLE_LOCAL_ONLY,
    ValidationResult.INVALID_LENGTH,
)


def read_numbering_plans() -> dict[str, NumberingPlan]:
    """Every plan libphonenumber holds, by region code (``GB``) or, for a non-geographic calling
    code, by the code (``800``); read afresh from the library's own metadata (about 0.1 s: every
    region's), so the engine's rules follow its version. ``phone_plans.numbering_plans`` keeps them."""
    from phonenumbers import PhoneMetadata
    from phonenumbers.phonenumberutil import _test_number_length

    metadata = {region: PhoneMetadata.metadata_for_region(region) for region in _REGIONS}
    for code in phonenumbers.COUNTRY_CODE_TO_REGION_CODE:
        key = _main_key(code)
        if key not in metadata:
            metadata[key] = PhoneMetadata.metadata_for_region_or_calling_code(
                code, phonenumbers.REGION_CODE_FOR_NON_GEO_ENTITY
            )
    plans: dict[str, NumberingPlan] = {}
    for key, plan in metadata.items():
        if plan is None or plan.country_code is None:  # pragma: no cover (every plan has its code)
            continue
        lengths = [_test_number_length("1" * length, plan) for length in range(MAX_NATIONAL_DIGITS + 1)]
        general = plan.general_desc.national_number_pattern if plan.general_desc else None
        plans[key] = NumberingPlan(
            key=key,
            country_code=plan.country_code,
            international_prefix=_anchored(plan.international_prefix),
            national_prefix=_anchored(plan.national_prefix_for_parsing),
            transforms=bool(plan.national_prefix_transform_rule),
            last_group=re.compile(plan.national_prefix_for_parsing or "").groups,
            general_pattern=general or None,
            strip_lengths=tuple(at for at, result in enumerate(lengths) if result not in _NOT_STRIPPED),
            length_reasons=tuple(
                None if result == ValidationResult.IS_POSSIBLE else _LENGTH_REASONS.get(result, INVALID)
                for result in lengths
            ),
        )
    return plans


def _anchored(pattern: str | None) -> str | None:
    # parse matches these with re.match: at the start of the digits, the first alternative that fits.
    return f"^(?:{pattern})" if pattern else None
