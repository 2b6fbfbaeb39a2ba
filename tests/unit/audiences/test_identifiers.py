"""Normalising and hashing single identifier values (docs/platform-notes.md §3.7)."""

import pytest

from shared.audiences.identifiers import (
    AudienceUser,
    DropReason,
    extern_id,
    is_sha256_hex,
    normalise_country,
    normalise_email,
    normalise_name,
    normalise_phone,
    sha256_hex,
)
from tests.audience_reference import PHONES_BY_COUNTRY

MARY_SHA256 = "f1904cf1a9d73a55fa5de0ac823c4403ded71afd4c3248d00bdcd0866552bb79"
PHONE_SHA256 = "1ef970831d7963307784fa8688e8fce101a15685d62aa765fed23f3a2c576a4e"


def test_email_hash_matches_the_platform_test_vector() -> None:
    # Given an e-mail with surrounding spaces and capitals
    raw = "  Mary@Example.COM "

    # When it is normalised and hashed
    normalised = normalise_email(raw)

    # Then it is the platform's documented hash of mary@example.com
    assert normalised == "mary@example.com"
    assert sha256_hex(normalised) == MARY_SHA256


def test_phone_hash_matches_the_platform_test_vector() -> None:
    # Given a formatted North American number
    raw = "+1 (555) 987-6543"

    # When it is normalised and hashed
    normalised = normalise_phone(raw)

    # Then it is the platform's documented hash of 15559876543
    assert normalised == "15559876543"
    assert sha256_hex(normalised) == PHONE_SHA256


@pytest.mark.parametrize(
    "raw", ["mary@", "@example.com", "mary example@x.com", "a..b@x.com", "a@b.c", "ma@ry@x.com"]
)
def test_invalid_email_is_dropped_not_hashed(raw: str) -> None:
    # Given / When
    result = normalise_email(raw)

    # Then
    assert result is DropReason.INVALID_EMAIL


@pytest.mark.parametrize("raw", [None, "", "   "])
def test_blank_email_is_empty(raw: str | None) -> None:
    assert normalise_email(raw) is DropReason.EMPTY


@pytest.mark.parametrize(
    ("raw", "country", "expected"),
    [
        ("07700 900123", "gb", "447700900123"),  # UK national: trunk 0 dropped, 44 prefixed
        ("+44 (0)7700 900123", None, "447700900123"),  # bracketed trunk after the code
        ("0044 7700 900123", "fr", "447700900123"),  # France's international prefix
        ("0044 7700 900123", None, "447700900123"),  # no country: taken to carry its code
        ("447700900123", None, "447700900123"),  # international without "+"
        ("(555) 987-6543", "us", "15559876543"),
        ("1 555 987 6543", "ca", "15559876543"),
        ("0412 345 678", "au", "61412345678"),
        ("0011 44 7700 900123", "au", "447700900123"),  # Australia's own international prefix
        ("011 44 7700 900123", "us", "447700900123"),  # North America's
        ("+81 90 1234 5678", "gb", "819012345678"),  # explicit code wins over the country
        ("(555) 987-6543 ext. 12", "us", "15559876543"),  # the extension is not part of it
    ],
)
def test_phone_becomes_international_digits(raw: str, country: str | None, expected: str) -> None:
    # Given / When
    result = normalise_phone(raw, country)

    # Then
    assert result == expected


@pytest.mark.parametrize(("country", "raw", "expected"), PHONES_BY_COUNTRY)
def test_a_national_number_is_read_by_its_countrys_plan(country: str, raw: str, expected: str) -> None:
    # Given a number as people in that country write it, and the customer's country
    # When
    result = normalise_phone(raw, country)

    # Then it is the international number, by that country's numbering plan
    assert result == expected


@pytest.mark.parametrize(("country", "raw", "expected"), PHONES_BY_COUNTRY)
def test_an_international_number_is_read_whatever_the_country(country: str, raw: str, expected: str) -> None:
    # Given the same number written with "+" and its country code, for a customer placed elsewhere
    written = "+" + expected

    # When
    result = normalise_phone(written, "us" if country != "US" else "gb")

    # Then it is the same number
    assert result == expected


def test_national_phone_without_any_country_is_dropped() -> None:
    # Given a UK national number and no customer or store country
    # When
    result = normalise_phone("07700 900123", None)

    # Then we cannot know its calling code
    assert result is DropReason.UNKNOWN_COUNTRY_CODE


def test_national_phone_of_a_country_without_numbering_plan_is_dropped() -> None:
    # Given a national number of a customer in Antarctica (an ISO country no numbering plan covers)
    # When / Then
    assert normalise_phone("090-1234-5678", "aq") is DropReason.UNKNOWN_COUNTRY_CODE


@pytest.mark.parametrize(
    ("raw", "country", "reason"),
    [
        ("12", "gb", DropReason.PHONE_TOO_SHORT),
        ("n/a", "gb", DropReason.INVALID_PHONE),
        ("555-9876", "us", DropReason.INVALID_PHONE),  # no area code: local only
        ("+1 555 98", None, DropReason.PHONE_TOO_SHORT),
        ("+1234567890123456", None, DropReason.PHONE_TOO_LONG),
        ("+999 1234 5678", None, DropReason.UNKNOWN_COUNTRY_CODE),
    ],
)
def test_unusable_phone_is_dropped_with_its_reason(raw: str, country: str | None, reason: DropReason) -> None:
    assert normalise_phone(raw, country) is reason


def test_phone_digits_of_other_scripts_are_read_as_the_digits_they_are() -> None:
    # Given Arabic-Indic digits
    arabic_indic = "".join(chr(0x0660 + int(digit)) for digit in "07700900123")

    # When
    result = normalise_phone(arabic_indic, "gb")

    # Then they are read as the number they write (and hashed as ASCII digits)
    assert result == "447700900123"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("O'Brien-Smith", "obriensmith"),
        ("  Mary Ann ", "maryann"),
        ("José", "josé"),
        ("Jose\u0301", "josé"),  # decomposed input is composed (NFC)
        ("Мария", "мария"),
        ("李 小龍", "李小龍"),
        ("नमस्ते", "नमस्ते"),  # combining vowel signs are kept
        ("Anne-Marie 2nd", "annemariend"),
    ],
)
def test_name_is_lowercase_letters_only(raw: str, expected: str) -> None:
    assert normalise_name(raw) == expected


def test_name_without_letters_is_invalid() -> None:
    assert normalise_name("--- 123") is DropReason.INVALID_NAME


@pytest.mark.parametrize(("raw", "expected"), [("GB", "gb"), (" us ", "us"), ("UK", "gb")])
def test_country_is_lowercase_alpha_2(raw: str, expected: str) -> None:
    assert normalise_country(raw) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("United States", "us"),
        ("United States of America", "us"),
        ("USA", "us"),
        ("U.S.A.", "us"),
        ("U.K.", "gb"),
        ("united kingdom", "gb"),
        ("England", "gb"),
        ("GBR", "gb"),
        ("Germany", "de"),
        ("Korea, Republic of", "kr"),
        ("South Korea", "kr"),
        ("Türkiye", "tr"),
        ("Turkey", "tr"),
        ("Côte d'Ivoire", "ci"),
        ("The Netherlands", "nl"),
    ],
)
def test_country_names_and_common_forms_become_their_iso_code(raw: str, expected: str) -> None:
    # Given a country as shops export it and people type it (an ISO or common name, an alpha-3 code)
    # When / Then it is the country's ISO 3166-1 alpha-2 code
    assert normalise_country(raw) == expected


@pytest.mark.parametrize("raw", ["XX", "Atlantis", "g1", "Deutschland"])
def test_unknown_country_is_invalid(raw: str) -> None:
    # Given a value that names no country in English (names in other languages are not read)
    # When / Then
    assert normalise_country(raw) is DropReason.INVALID_COUNTRY


def test_sha256_hex_is_detected_in_either_case() -> None:
    assert is_sha256_hex(MARY_SHA256)
    assert is_sha256_hex(MARY_SHA256.upper())
    assert not is_sha256_hex(MARY_SHA256[:-1])
    assert not is_sha256_hex(MARY_SHA256[:-1] + "g")


def test_extern_id_is_the_user_id_unhashed() -> None:
    assert extern_id("customer-42") == "customer-42"


def test_extern_id_that_is_an_email_leaves_hashed() -> None:
    # Given a shop whose user ids are e-mail addresses
    # When
    result = extern_id("mary@example.com")

    # Then the raw address is not sent
    assert result == MARY_SHA256


def test_user_record_accepts_spec_field_names_and_missing_optionals() -> None:
    # Given a record as the spec writes it, with a numeric phone and no e-mail
    record = {"user_id": "u1", "firstName": "Mary", "lastName": "Major", "phone": 447700900123, "score": 0.7}

    # When
    user = AudienceUser.model_validate(record)

    # Then
    assert (user.first_name, user.last_name, user.phone, user.email, user.country) == (
        "Mary",
        "Major",
        "447700900123",
        None,
        None,
    )


def test_user_record_repr_hides_personal_fields() -> None:
    # Given
    user = AudienceUser(user_id="u1", email="mary@example.com", firstName="Mary", phone="+447700900123")

    # When
    text = repr(user)

    # Then
    assert "mary" not in text.lower()
    assert "7700" not in text
