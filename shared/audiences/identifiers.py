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
from datetime import UTC, date, datetime
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
# The other match keys (docs/platform-notes.md §3.7), after all of the above, each sent when at least
# one user of the list has a usable value for it (a list without dates of birth sends no DOB column).
# The date of birth is one value sent as three keys; the report counts it once, as DOB. MADID is
# never hashed.
EXTRA_SCHEMA: tuple[str, ...] = ("CT", "ST", "ZIP", "DOBY", "DOBM", "DOBD", "GEN", "MADID")
EXTRA_REPORT_KEYS: tuple[str, ...] = ("CT", "ST", "ZIP", "DOB", "GEN", "MADID")
_CALIFORNIA = frozenset({"ca", "california"})
DataProcessingOptions = tuple[list[str], int, int]


class DropReason(Enum):
    """Why an identifier value was not used. A plain Enum (not a str) so it can never be hashed by mistake."""

    EMPTY = "empty"
    INVALID_EMAIL = "invalid_email"
    PHONE_TOO_SHORT = "phone_too_short"
    PHONE_TOO_LONG = "phone_too_long"
    UNKNOWN_COUNTRY_CODE = "unknown_country_code"
    INVALID_PHONE = "invalid_phone"
    INVALID_CITY = "invalid_city"
    INVALID_STATE = "invalid_state"
    INVALID_POSTCODE = "invalid_postcode"
    INVALID_DATE_OF_BIRTH = "invalid_date_of_birth"
    INVALID_GENDER = "invalid_gender"
    INVALID_MADID = "invalid_madid"
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
    # The other match keys (docs/platform-notes.md §3.7), each optional: ``date_of_birth`` ISO 8601
    # (``1985-03-07``), ``gender`` in words or letters, ``external_id`` the id the shop's pixel and
    # server events carry for the person (sent as EXTERN_ID instead of ``user_id``), ``madid`` a mobile
    # advertiser id.
    city: str | None = Field(default=None, repr=False)
    postcode: str | None = Field(default=None, repr=False)
    date_of_birth: str | None = Field(default=None, alias="dateOfBirth", repr=False)
    gender: str | None = Field(default=None, repr=False)
    external_id: str | None = Field(default=None, alias="externalId", repr=False)
    madid: str | None = Field(default=None, repr=False)


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


def extern_id_of(user_id: str, external_id: str | None) -> str:
    """The EXTERN_ID of a user: their ``external_id`` (trimmed) when they have one, else their
    ``user_id``, by the rule of :func:`extern_id`."""
    given = external_id.strip() if external_id else ""
    return extern_id(given or user_id)


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
    """Lower-case ISO 3166-1 alpha-2 code (``"GB "`` -> ``"gb"``), or ``EMPTY`` / ``INVALID_COUNTRY``.

    A value that is not a code is read as a country's English name, alpha-3 code or common form
    (``"United States"``, ``"USA"``, ``"U.K."``) by ``shared.countries``, loaded on the first
    such value; names in other languages (``"Deutschland"``) are not read.
    """
    if value is None or not (code := value.strip().lower()):
        return DropReason.EMPTY
    code = COUNTRY_ALIASES.get(code, code)
    if code in ISO_COUNTRIES:
        return code
    from shared.countries import country_code

    return country_code(code) or DropReason.INVALID_COUNTRY


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


def normalise_phone(value: str | None, country: str | None = None) -> str | DropReason:
    """International phone number, digits only: ``"+1 (555) 987-6543"`` -> ``"15559876543"``.

    ``country`` is the customer's (or else the store's) alpha-2 country; its numbering plan reads a
    national number (UK ``"07700 900123"`` -> ``"447700900123"``, Japan ``"090-1234-5678"`` ->
    ``"819012345678"``). Every country's plan comes from libphonenumber (``shared.audiences.phones``,
    loaded on the first phone). Returns ``EMPTY``, ``PHONE_TOO_SHORT``, ``PHONE_TOO_LONG``,
    ``UNKNOWN_COUNTRY_CODE`` or ``INVALID_PHONE`` when unusable.
    """
    if value is None or not (stripped := value.strip()):
        return DropReason.EMPTY
    from shared.audiences.phones import read_phone

    phone = read_phone(stripped, country)
    return DropReason(phone) if isinstance(phone, str) else phone.digits


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


# --- the other match keys: city, state, postcode, date of birth, gender, advertising id -----------

# Letters of any Latin script lose their accents ("São Paulo" -> "saopaulo"): the platform takes only
# a-z for these keys (docs/platform-notes.md §3.7: "Only FN and LN support special characters").
_NOT_ASCII_LOWER = re.compile(r"[^a-z]+")


def _plain_letters(value: str) -> str:
    """Lower-case a-z of ``value``, accents taken off letters that have them, everything else gone."""
    decomposed = unicodedata.normalize("NFKD", value.lower())
    return _NOT_ASCII_LOWER.sub("", decomposed.encode("ascii", "ignore").decode())


def normalise_city(value: str | None) -> str | DropReason:
    """City: lower-case a-z, no spaces or punctuation (``"St. Albans"`` -> ``"stalbans"``,
    ``"Zürich"`` -> ``"zurich"``); ``INVALID_CITY`` when no such letter is left (a city written in
    another script)."""
    if value is None or not value.strip():
        return DropReason.EMPTY
    return _plain_letters(value) or DropReason.INVALID_CITY


# The United States' states, district and territories (ANSI/USPS codes), by name: a US state is sent
# as its 2-letter code.
US_STATES: Mapping[str, str] = {
    "alabama": "al",
    "alaska": "ak",
    "arizona": "az",
    "arkansas": "ar",
    "california": "ca",
    "colorado": "co",
    "connecticut": "ct",
    "delaware": "de",
    "districtofcolumbia": "dc",
    "florida": "fl",
    "georgia": "ga",
    "hawaii": "hi",
    "idaho": "id",
    "illinois": "il",
    "indiana": "in",
    "iowa": "ia",
    "kansas": "ks",
    "kentucky": "ky",
    "louisiana": "la",
    "maine": "me",
    "maryland": "md",
    "massachusetts": "ma",
    "michigan": "mi",
    "minnesota": "mn",
    "mississippi": "ms",
    "missouri": "mo",
    "montana": "mt",
    "nebraska": "ne",
    "nevada": "nv",
    "newhampshire": "nh",
    "newjersey": "nj",
    "newmexico": "nm",
    "newyork": "ny",
    "northcarolina": "nc",
    "northdakota": "nd",
    "ohio": "oh",
    "oklahoma": "ok",
    "oregon": "or",
    "pennsylvania": "pa",
    "rhodeisland": "ri",
    "southcarolina": "sc",
    "southdakota": "sd",
    "tennessee": "tn",
    "texas": "tx",
    "utah": "ut",
    "vermont": "vt",
    "virginia": "va",
    "washington": "wa",
    "westvirginia": "wv",
    "wisconsin": "wi",
    "wyoming": "wy",
    "americansamoa": "as",
    "guam": "gu",
    "northernmarianaislands": "mp",
    "puertorico": "pr",
    "unitedstatesvirginislands": "vi",
    "usvirginislands": "vi",
}
_US_STATE_CODES = frozenset(US_STATES.values())


def normalise_state(value: str | None, country: str | None = None) -> str | DropReason:
    """State, province or region. In the United States (``country`` ``us``) its 2-letter code,
    lower-case (``"California"`` and ``"CA"`` -> ``"ca"``), ``INVALID_STATE`` for anything else;
    elsewhere lower-case a-z as a city (``"Île-de-France"`` -> ``"iledefrance"``)."""
    if value is None or not value.strip():
        return DropReason.EMPTY
    letters = _plain_letters(value)
    if country == "us":
        code = letters if letters in _US_STATE_CODES else US_STATES.get(letters)
        return code or DropReason.INVALID_STATE
    return letters or DropReason.INVALID_STATE


_US_ZIP = re.compile(r"([0-9]{5})(?:-?[0-9]{4})?")
# A UK postcode, or the part of one the platform takes: area and district, then the sector's digit.
_UK_POSTCODE = re.compile(r"([a-z]{1,2}[0-9][a-z0-9]?)([0-9])(?:[a-z]{2})?")


def normalise_postcode(value: str | None, country: str | None = None) -> str | DropReason:
    """Postcode: lower-case without white space; in the United States the 5-digit ZIP code
    (``"94105-1234"`` -> ``"94105"``), in the United Kingdom area, district and sector
    (``"SW1A 1AA"`` -> ``"sw1a1"``). ``INVALID_POSTCODE`` for a US or UK code of another shape."""
    if value is None or not value.strip():
        return DropReason.EMPTY
    code = "".join(value.lower().split())
    if country == "us":
        match = _US_ZIP.fullmatch(code)
        return match.group(1) if match else DropReason.INVALID_POSTCODE
    if country == "gb":
        match = _UK_POSTCODE.fullmatch(code)
        return match.group(1) + match.group(2) if match else DropReason.INVALID_POSTCODE
    return code


_ISO_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
EARLIEST_BIRTH_YEAR = 1900


def normalise_date_of_birth(
    value: str | None, today: date | None = None
) -> tuple[str, str, str] | DropReason:
    """Date of birth as the platform's three keys (``DOBY``, ``DOBM``, ``DOBD``): ``"1985-03-07"`` ->
    ``("1985", "03", "07")``. The date is ISO 8601 (a sync stores every customer's so); a date that
    does not exist, before 1900 or after ``today`` is ``INVALID_DATE_OF_BIRTH``."""
    if value is None or not (text := value.strip()):
        return DropReason.EMPTY
    match = _ISO_DATE.fullmatch(text)
    if match is None:
        return DropReason.INVALID_DATE_OF_BIRTH
    try:
        born = date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
    except ValueError:
        return DropReason.INVALID_DATE_OF_BIRTH
    if born.year < EARLIEST_BIRTH_YEAR or born > (today or datetime.now(UTC).date()):
        return DropReason.INVALID_DATE_OF_BIRTH
    return match.group(1), match.group(2), match.group(3)


# The words shops and forms use for a gender the platform takes (``m`` or ``f``); any other value
# (unknown, not given, non-binary) is not sent rather than guessed.
GENDERS: Mapping[str, str] = {
    **dict.fromkeys(
        (
            "m",
            "male",
            "man",
            "boy",
            "mr",
            "mannlich",
            "maennlich",
            "homme",
            "masculin",
            "hombre",
            "masculino",
            "maschio",
            "uomo",
            "man",
        ),
        "m",
    ),
    **dict.fromkeys(
        (
            "f",
            "female",
            "woman",
            "girl",
            "w",
            "weiblich",
            "femme",
            "feminin",
            "mujer",
            "femenino",
            "feminino",
            "femmina",
            "donna",
            "vrouw",
            "kvinna",
        ),
        "f",
    ),
}


def normalise_gender(value: str | None) -> str | DropReason:
    """``m`` or ``f`` from the usual words (``"Female"``, ``"W"`` for German *weiblich``, ...);
    ``INVALID_GENDER`` for any other value."""
    if value is None or not value.strip():
        return DropReason.EMPTY
    return GENDERS.get(_plain_letters(value)) or DropReason.INVALID_GENDER


_ADVERTISING_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_NO_ADVERTISING_ID = "00000000-0000-0000-0000-000000000000"  # what a device gives when tracking is limited


def normalise_madid(value: str | None) -> str | DropReason:
    """Mobile advertiser id (Apple's IDFA or Google's advertising id), sent unhashed: trimmed and
    lower-cased, hyphens kept. ``INVALID_MADID`` for anything that is not such an id (or the all-zero
    id a device gives when the person limited ad tracking)."""
    if value is None or not (text := value.strip()):
        return DropReason.EMPTY
    madid = text.lower()
    if _ADVERTISING_ID.fullmatch(madid) is None or madid == _NO_ADVERTISING_ID:
        return DropReason.INVALID_MADID
    return madid
