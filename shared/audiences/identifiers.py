"""Customer identifiers: the audience user record, and normalising and hashing per Meta's rules.

The rules are Meta's customer-list rules (docs/platform-notes.md §3.7): every key except
``EXTERN_ID`` is normalised, then sent as the lower-case hex SHA-256 of its UTF-8 bytes. Each
``normalise_*`` function returns the normalised value or the :class:`DropReason` it was unusable, so
bad input is dropped and counted instead of hashed into garbage that can never match.

These per-value functions are the readable specification. ``shared.audiences.preparation`` applies the
same rules column by column, tuned for speed; a test keeps the two identical.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum

from pydantic import BaseModel, ConfigDict, Field

# The multi-key schema of every uploaded row, in order. EXTERN_ID carries the merchant's user_id
# (see ``extern_id``); a key the record does not have is sent as "" as the platform requires.
SCHEMA: tuple[str, ...] = ("EXTERN_ID", "EMAIL", "PHONE", "FN", "LN", "COUNTRY")
HASHED_KEYS: tuple[str, ...] = ("EMAIL", "PHONE", "FN", "LN", "COUNTRY")
# The platform matches people on these alone; names and country only strengthen a match, so a row
# without either is dropped instead of uploaded as noise.
MATCH_KEYS: tuple[str, ...] = ("EMAIL", "PHONE")
# Limited Data Use (docs/platform-notes.md §3.8): three more columns, sent when an audience's users
# carry a Limited Data Use flag. Per row: the options (["LDU"], or [] for explicitly not LDU), the
# country (1 = USA, 0 = let the platform locate the person) and the state (1000 = California, 0 =
# locate; set whenever the country is).
DATA_PROCESSING_SCHEMA: tuple[str, ...] = (
    "DATA_PROCESSING_OPTIONS",
    "DATA_PROCESSING_OPTIONS_COUNTRY",
    "DATA_PROCESSING_OPTIONS_STATE",
)
# A value-based seed's customer value (docs/platform-notes.md §4.1): one more column, last, holding a
# non-negative number, or "" for a customer without a value. Never hashed.
VALUE_SCHEMA_KEY = "LOOKALIKE_VALUE"
_CALIFORNIA = frozenset({"ca", "california"})
DataProcessingOptions = tuple[list[str], int, int]


class DropReason(Enum):
    """Why an identifier value was not used. A plain Enum (not a str) so it can never be hashed by mistake."""

    EMPTY = "empty"
    INVALID_EMAIL = "invalid_email"
    PHONE_TOO_SHORT = "phone_too_short"
    PHONE_TOO_LONG = "phone_too_long"
    UNKNOWN_COUNTRY_CODE = "unknown_country_code"
    INVALID_NAME = "invalid_name"
    INVALID_COUNTRY = "invalid_country"


class AudienceUser(BaseModel):
    """One user of an audience (docs/service-contract.md §2.4), plus the optional ISO alpha-2 ``country``.

    Values are kept exactly as the merchant sent them (the CSV snapshot needs them raw); judging them is
    the normalisers' job, so a bad e-mail drops that identifier, not the whole record. Personal fields
    are left out of ``repr`` so a stray log line cannot leak them.
    """

    model_config = ConfigDict(
        frozen=True,
        extra="ignore",
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        # Phones and ids often arrive as JSON numbers.
        coerce_numbers_to_str=True,
    )

    user_id: str = Field(min_length=1)
    email: str | None = Field(default=None, repr=False)
    first_name: str | None = Field(default=None, alias="firstName", repr=False)
    last_name: str | None = Field(default=None, alias="lastName", repr=False)
    phone: str | None = Field(default=None, repr=False)
    score: float | None = None
    country: str | None = None
    # Limited Data Use (docs/platform-notes.md §3.8), beside country as extensions of the spec's record:
    # the person asked for Limited Data Use (true), or explicitly not (false), and their state or region.
    limited_data_use: bool | None = Field(default=None, alias="limitedDataUse")
    state: str | None = Field(default=None, repr=False)


# --- hashing -------------------------------------------------------------------------------------

_SHA256_HEX = re.compile(r"[0-9a-fA-F]{64}")


def sha256_hex(value: str) -> str:
    """Lower-case hex SHA-256 of the UTF-8 bytes of ``value``."""
    return hashlib.sha256(value.encode()).hexdigest()


def is_sha256_hex(value: str) -> bool:
    """True when ``value`` is already a SHA-256 digest (64 hex characters), so must not be hashed again."""
    return len(value) == 64 and _SHA256_HEX.fullmatch(value) is not None


def extern_id(user_id: str) -> str:
    """The EXTERN_ID sent for ``user_id``: the id itself, unhashed, so re-uploads and removals match.

    Meta accepts EXTERN_ID unhashed as long as it is sent the same way every time. Some shops use the
    customer's e-mail as their user id, and the spec promises e-mails leave hashed, so an id containing
    ``@`` is sent as its SHA-256 instead; the rule is deterministic, so matching still works.
    """
    return sha256_hex(user_id) if "@" in user_id else user_id


# --- e-mail -------------------------------------------------------------------------------------

# Pragmatic RFC 5322 subset on the lower-cased address: dot-atom local part, dotted host name with
# an alphabetic top-level domain. Addresses with non-ASCII characters are rejected; the platform does
# not document how it matches them.
# Neither half can match "@", so an address matches the whole pattern exactly when it has one "@" and
# each half matches its side (the fast path checks the halves separately).
EMAIL_LOCAL_PART = r"[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*"
EMAIL_DOMAIN = r"(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}"
EMAIL_PATTERN = re.compile(f"{EMAIL_LOCAL_PART}@{EMAIL_DOMAIN}")
EMAIL_MAX_LENGTH = 254


def normalise_email(value: str | None) -> str | DropReason:
    """Trimmed, lower-cased e-mail address, or why it is unusable (``EMPTY``, ``INVALID_EMAIL``)."""
    if value is None or not (email := value.strip().lower()):
        return DropReason.EMPTY
    if len(email) > EMAIL_MAX_LENGTH or EMAIL_PATTERN.fullmatch(email) is None:
        return DropReason.INVALID_EMAIL
    return email


# --- country ------------------------------------------------------------------------------------

# ISO 3166-1 alpha-2, officially assigned codes.
_ISO_ALPHA_2 = """
    ad ae af ag ai al am ao aq ar as at au aw ax az ba bb bd be bf bg bh bi bj bl bm bn bo bq br bs bt
    bv bw by bz ca cc cd cf cg ch ci ck cl cm cn co cr cu cv cw cx cy cz de dj dk dm do dz ec ee eg eh
    er es et fi fj fk fm fo fr ga gb gd ge gf gg gh gi gl gm gn gp gq gr gs gt gu gw gy hk hm hn hr ht
    hu id ie il im in io iq ir is it je jm jo jp ke kg kh ki km kn kp kr kw ky kz la lb lc li lk lr ls
    lt lu lv ly ma mc md me mf mg mh mk ml mm mn mo mp mq mr ms mt mu mv mw mx my mz na nc ne nf ng ni
    nl no np nr nu nz om pa pe pf pg ph pk pl pm pn pr ps pt pw py qa re ro rs ru rw sa sb sc sd se sg
    sh si sj sk sl sm sn so sr ss st sv sx sy sz tc td tf tg th tj tk tl tm tn to tr tt tv tw tz ua ug
    um us uy uz va vc ve vg vi vn vu wf ws ye yt za zm zw
"""
ISO_COUNTRIES: frozenset[str] = frozenset(_ISO_ALPHA_2.split())
# "UK" is the code merchants most often type for the United Kingdom; ISO reserves it for GB.
COUNTRY_ALIASES: Mapping[str, str] = {"uk": "gb"}


def normalise_country(value: str | None) -> str | DropReason:
    """Lower-case ISO 3166-1 alpha-2 code (``"GB "`` -> ``"gb"``), or ``EMPTY`` / ``INVALID_COUNTRY``."""
    if value is None or not (code := value.strip().lower()):
        return DropReason.EMPTY
    code = COUNTRY_ALIASES.get(code, code)
    return code if code in ISO_COUNTRIES else DropReason.INVALID_COUNTRY


def data_processing_options(
    limited_data_use: bool | None, country: str | None, state: str | None
) -> DataProcessingOptions:
    """One row's Limited Data Use columns (docs/platform-notes.md §3.8): ``(["LDU"], 1, 1000)`` for a
    Californian who asked for it; ``(["LDU"], 0, 0)`` (the platform locates them) for anyone else who
    did, since for customer lists LDU applies to California only and the platform decides where the
    person is; ``([], 0, 0)`` for a person who did not."""
    if not limited_data_use:
        return ([], 0, 0)
    in_california = normalise_country(country) == "us" and (state or "").strip().lower() in _CALIFORNIA
    return (["LDU"], 1, 1000) if in_california else (["LDU"], 0, 0)


# --- phone --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DialingRule:
    """How a country writes phone numbers, enough to turn a national number into an international one."""

    calling_code: str
    # Dialled before a national number at home ("0" in the UK), never part of the international form.
    trunk_prefix: str
    # Dialled at home to call abroad ("00", "011" in North America); the digits after it are international.
    international_prefix: str
    # Shortest and longest national significant number (the digits after the calling code).
    min_national_length: int
    max_national_length: int


DIALING_RULES: Mapping[str, DialingRule] = {
    "gb": DialingRule("44", "0", "00", 9, 10),
    "us": DialingRule("1", "1", "011", 10, 10),
    "ca": DialingRule("1", "1", "011", 10, 10),
    "au": DialingRule("61", "0", "0011", 9, 9),
    "nz": DialingRule("64", "0", "00", 8, 10),
    "ie": DialingRule("353", "0", "00", 7, 9),
    "fr": DialingRule("33", "0", "00", 9, 9),
    "de": DialingRule("49", "0", "00", 6, 11),
    "nl": DialingRule("31", "0", "00", 9, 9),
    "es": DialingRule("34", "", "00", 9, 9),
}
# Calling codes are prefix-free (ITU E.164), so at most one of a number's first 1-3 digits matches.
RULES_BY_CALLING_CODE: Mapping[str, DialingRule] = {
    rule.calling_code: rule for rule in DIALING_RULES.values()
}
# E.164: at most 15 digits including the calling code; shorter than 8 is not a reachable number anywhere
# we can check, so it is treated as a typo.
E164_MAX_LENGTH = 15
E164_MIN_LENGTH = 8
GENERIC_INTERNATIONAL_PREFIX = "00"


class _KeepDigits(dict[int, int | None]):
    """``str.translate`` table deleting every character except ASCII 0-9, filled lazily per code point.

    Only ASCII digits are kept on purpose: other scripts' digits would hash as different bytes.
    """

    def __missing__(self, codepoint: int) -> int | None:
        kept = codepoint if 0x30 <= codepoint <= 0x39 else None
        self[codepoint] = kept
        return kept


_KEEP_DIGITS = _KeepDigits()
_NON_DIGIT_BYTES = bytes(byte for byte in range(128) if not 0x30 <= byte <= 0x39)


def phone_digits(value: str) -> str:
    """The ASCII digits of ``value`` in order (``"+44 (0)7700"`` -> ``"4407700"``)."""
    if value.isascii():
        # bytes.translate deletes in C without a per-character dictionary lookup: twice as fast.
        return value.encode().translate(None, _NON_DIGIT_BYTES).decode()
    return value.translate(_KEEP_DIGITS)


def normalise_phone(value: str | None, country: str | None = None) -> str | DropReason:
    """International phone number, digits only: ``"+1 (555) 987-6543"`` -> ``"15559876543"``.

    ``country`` is the customer's (or else the store's) lower-case alpha-2 country; it decides the
    calling code of a national number (UK ``"07700 900123"`` -> ``"447700900123"``). Returns
    ``EMPTY``, ``PHONE_TOO_SHORT``, ``PHONE_TOO_LONG`` or ``UNKNOWN_COUNTRY_CODE`` when unusable.
    """
    if value is None or not (stripped := value.strip()):
        return DropReason.EMPTY
    rule = DIALING_RULES.get(country) if country else None
    return phone_from_digits(phone_digits(stripped), stripped[0] == "+", rule)


def phone_from_digits(
    digits: str, explicit_international: bool, rule: DialingRule | None
) -> str | DropReason:
    """International number from the digits of a phone value.

    The readable rule; ``shared.audiences.preparation`` has a table-driven copy on bytes, kept identical
    by the equivalence tests.

    ``explicit_international`` means the value started with ``+``; ``rule`` is the country to assume
    for a national number, or None when unknown.
    """
    if not digits:
        return DropReason.PHONE_TOO_SHORT
    if not explicit_international:
        for prefix in _international_prefixes(rule):
            if digits.startswith(prefix):
                digits = digits[len(prefix) :]
                explicit_international = True
                break
    if explicit_international:
        number = digits.lstrip("0")
        number_rule = _rule_for_calling_code(number)
        if number_rule is not None:
            number = number_rule.calling_code + _national_significant(number, number_rule)
    elif rule is not None:
        number_rule = rule
        if not _is_international_for(digits, rule):
            number = rule.calling_code + _national_significant(digits, rule, has_calling_code=False)
        else:
            number = digits  # written without "+" but already starting with the calling code
    else:
        number_rule = _rule_for_calling_code(digits)
        if number_rule is None or not _is_international_for(digits, number_rule):
            return DropReason.UNKNOWN_COUNTRY_CODE
        number = digits
    return _checked_length(number, number_rule)


def _international_prefixes(rule: DialingRule | None) -> tuple[str, ...]:
    """Prefixes meaning "an international number follows": the country's own, then the ITU "00".

    "00" is safe to accept everywhere we know: no national number of those countries starts with it.
    """
    if rule is None or rule.international_prefix == GENERIC_INTERNATIONAL_PREFIX:
        return (GENERIC_INTERNATIONAL_PREFIX,)
    return (rule.international_prefix, GENERIC_INTERNATIONAL_PREFIX)


def _rule_for_calling_code(number: str) -> DialingRule | None:
    """The known country whose calling code starts ``number`` (codes are 1-3 digits, prefix-free)."""
    rules = RULES_BY_CALLING_CODE
    return rules.get(number[:1]) or rules.get(number[:2]) or rules.get(number[:3])


def _national_significant(number: str, rule: DialingRule, *, has_calling_code: bool = True) -> str:
    """The national number without leading zeros or trunk prefix (Meta: "remove any leading zeroes").

    With ``has_calling_code`` it also drops a trunk "0" written after the code, as in the common UK
    "+44 (0)7700 900123".
    """
    national = number[len(rule.calling_code) :] if has_calling_code else number
    national = national.lstrip("0")
    if not has_calling_code and rule.trunk_prefix and national.startswith(rule.trunk_prefix):
        national = national[len(rule.trunk_prefix) :]
    return national


def _is_international_for(digits: str, rule: DialingRule) -> bool:
    """True when ``digits`` already start with ``rule``'s calling code followed by a national number."""
    national = digits[len(rule.calling_code) :]
    return (
        digits.startswith(rule.calling_code)
        and rule.min_national_length <= len(national) <= rule.max_national_length
        and not (rule.trunk_prefix and national.startswith(rule.trunk_prefix))
    )


def _checked_length(number: str, rule: DialingRule | None) -> str | DropReason:
    """``number`` if its length is possible for its country (or for E.164 when the country is unknown)."""
    if rule is not None:
        national_length = len(number) - len(rule.calling_code)
        low, high = rule.min_national_length, rule.max_national_length
    else:
        national_length, low, high = len(number), E164_MIN_LENGTH, E164_MAX_LENGTH
    if national_length < low:
        return DropReason.PHONE_TOO_SHORT
    if national_length > high:
        return DropReason.PHONE_TOO_LONG
    return number


# --- names --------------------------------------------------------------------------------------


class _KeepLetters(dict[int, int | None]):
    """``str.translate`` table keeping letters and combining marks, deleting everything else.

    Unicode has over a million code points, so the table fills itself lazily, once per code point seen.
    Marks are kept because scripts such as Devanagari need them even after NFC composition.
    """

    def __missing__(self, codepoint: int) -> int | None:
        kept = codepoint if unicodedata.category(chr(codepoint))[0] in "LM" else None
        self[codepoint] = kept
        return kept


LETTERS_ONLY: dict[int, int | None] = _KeepLetters()


def normalise_name(value: str | None) -> str | DropReason:
    """First or last name: lower-cased, NFC, letters only (``"O'Brien-Smith"`` -> ``"obriensmith"``).

    Punctuation, whitespace, digits and symbols are removed; non-Latin letters are kept in UTF-8, which
    Meta allows for FN and LN only. Returns ``EMPTY`` for a blank value, ``INVALID_NAME`` when no letter
    is left.
    """
    if value is None or not value.strip():
        return DropReason.EMPTY
    # Lower-casing can decompose characters (e.g. "İ"), so compose after it.
    name = unicodedata.normalize("NFC", value.lower()).translate(LETTERS_ONLY)
    return name or DropReason.INVALID_NAME
