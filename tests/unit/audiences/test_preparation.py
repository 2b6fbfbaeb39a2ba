"""Preparing upload rows: the fast path, its equivalence with the reference, and the quality report."""

import itertools

import pytest

from shared.audiences.identifiers import SCHEMA, AudienceUser, sha256_hex
from shared.audiences.preparation import IdentifierColumns, prepare_audience, prepare_columns
from shared.errors import ValidationFailed
from tests.audience_reference import PHONES_BY_COUNTRY, PLAN_COUNTRIES, generate_corpus, prepare_reference

MARY_SHA256 = "f1904cf1a9d73a55fa5de0ac823c4403ded71afd4c3248d00bdcd0866552bb79"
PHONE_SHA256 = "1ef970831d7963307784fa8688e8fce101a15685d62aa765fed23f3a2c576a4e"


@pytest.mark.parametrize("default_country", [None, "GB", "us"])
def test_fast_path_equals_reference_on_a_varied_corpus(default_country: str | None) -> None:
    # Given messy users: Unicode names, pre-hashed values, invalid values, duplicates, many countries
    corpus = generate_corpus(5_000, seed=11)

    # When both implementations prepare them
    fast = prepare_columns(IdentifierColumns.from_records(corpus), default_country=default_country)
    reference = prepare_reference(corpus, default_country=default_country)

    # Then rows and report are identical, and the corpus did exercise the drop paths
    assert fast.rows == reference.rows
    assert fast.report == reference.report
    assert fast.report.identifiers["EMAIL"].unusable > 0
    assert fast.report.duplicate_user_ids > 0


# Hand-picked edge cases for the fast path's own copies of the rules (bytes phone path, split e-mail
# check, ASCII name shortcut); each is compared with the reference under every country we have a rule for.
EDGE_PHONES = [
    "+44 (0)7700 900123",
    "0044 7700 900123",
    "07700 900123",
    "447700900123",
    "+447700900123",
    "011 44 7700 900123",
    "0011 61 412 345 678",
    "0412 345 678",
    "61412345678",
    "+61 (0) 412 345 678",
    "1 555 987 6543",
    "+1 555 987 6543",
    "555-987-6543",
    "15559876543",
    "(555) 987 6543 ext 12",
    "+353 1 234 5678",
    "01 234 5678",
    "+33 6 12 34 56 78",
    "06 12 34 56 78",
    "+49 30 123456",
    "030 123456",
    "+31 6 12345678",
    "+34 612 345 678",
    "612 345 678",
    "+64 21 123 4567",
    "+81 90 1234 5678",
    "090 1234 5678",
    "+",
    "++44",
    "00",
    "0000000",
    "123",
    "+0 44 7700 900123",
    "\u0660\u0667\u0667\u0660\u0660 \u0669\u0660\u0660\u0661\u0662\u0663"  # non-ASCII digits,
    "\uff10\uff17\uff17\uff10\uff10 \uff19\uff10\uff10\uff11\uff12\uff13",
    "+44 \uff17\uff17\uff10\uff10 900123",
    "tel:+447700900123",
    "44 0770 090012",  # calling code, then a trunk 0: national after all
    "61 0412 345 67",
    "  ",
    "",
    "1" * 20,
    "+1" + "2" * 14,
    "+999 1234 5678",
    "0" * 64,
    "A" * 64,
    "4" * 64 + " ",
    # Zeros running past the first digits the fast path reads a number's shape from
    "0" * 20,
    "+" + "0" * 20 + "44",
    "0000007700900123",
    "+0000044 0000 7700",
    "00 000000 44 7700 900123",
    "+44 000000000 7700 900123",
    "440000000077009001",
    "0011 0000 61 412",
    "+9",
    "1" * 6,
    "12345678901234",
    *(number for _, number, _ in PHONES_BY_COUNTRY),
]
EDGE_EMAILS = [
    "a@b.co",
    "A.B@Example.COM",
    " x@y.io ",
    ".a@b.co",
    "a.@b.co",
    "a..b@c.co",
    "a@b",
    "a@b.c",
    "a@-b.co",
    "a@b-.co",
    "a@b..co",
    "a@@b.co",
    "a@b@c.co",
    "a+tag!#$%&'*/=?^_`{|}~-x@b.co",
    "é@b.co",
    "a@é.co",
    "a@b.co.uk",
    "a@1.2.3.4",
    "a@b.c0",
    "K@b.co",
    "İ@b.co",
    "@b.co",
    "a@",
    "@",
    "a" * 64 + "@b.co",
    "a" * 250 + "@b.co",
    "a@" + "b" * 64 + ".co",
    "a@" + "b" * 63 + ".co",
    "F" * 64,
    "a b@c.co",
    "a\n@b.co",
]
EDGE_NAMES = [
    "O'Brien",
    "  Mary-Jane  ",
    "123",
    "--",
    "  ",
    "",
    "Zoë",
    "İlker",
    "ǅemal",
    "Jose\u0301",
    "a1b2",
    "A" * 64,
    "ABCDEF" * 10 + "ABCD",
    "François",
    "नमस्ते",
    "\t",
    "Ⅻ",
    "ﬁnn",
    "ß",
]


# The other match keys' edge cases: scripts and accents, US and UK shapes, dates that do not exist,
# genders in several languages, advertising ids of every shape, pre-hashed values.
EDGE_CITIES = ["São Paulo", "St. Albans", "  New York ", "東京", "Zürich", "--", "", "F" * 64, "KÖLN"]
EDGE_STATES = [
    "California",
    " ca ",
    "CA",
    "New York",
    "XX",
    "Île-de-France",
    "東京都",
    "",
    "Bavaria",
    "d" * 64,
]
EDGE_POSTCODES = [
    "94105-1234",
    "94105",
    "9410",
    "SW1A 1AA",
    "sw1a1",
    "EC1A",
    "75008",
    "M5V 3L9",
    " ",
    "1" * 64,
]
EDGE_BIRTHS = [
    "1985-03-07",
    "1985-02-30",
    "07/03/1985",
    "1899-12-31",
    "2999-01-01",
    "",
    " 2000-01-01 ",
    "1985",
]
EDGE_GENDERS = ["F", "female", "M", "Male", "w", "Weiblich", "non-binary", "x", " ", "f" * 64]
EDGE_MADIDS = [
    "6D92078A-8246-4BA4-AE5B-76104861E7DC",
    " 6d92078a-8246-4ba4-ae5b-76104861e7dc ",
    "00000000-0000-0000-0000-000000000000",
    "6d92078a82464ba4ae5b76104861e7dc",
    "not-an-id",
    "a" * 64,
    "",
]
EDGE_EXTERNAL_IDS = ["shop-42", " 1001 ", "ann@example.com", "", None]


def extra_key_records(count: int = 400) -> list[dict[str, str | None]]:
    """Users with every edge case of the other match keys, under several countries."""
    countries = [None, "US", "gb", "FR", "BR", "xx"]

    def pick(values: list[str], index: int) -> str | None:
        value = values[index % len(values)]
        return value if index % 11 else None

    return [
        {
            "user_id": f"u{index % 350}",
            "email": f"user{index}@example.com" if index % 7 else None,
            "phone": "+1 415 555 2671" if index % 5 == 0 else None,
            "country": countries[index % len(countries)],
            "city": pick(EDGE_CITIES, index),
            "state": pick(EDGE_STATES, index * 3),
            "postcode": pick(EDGE_POSTCODES, index * 5),
            "dateOfBirth": pick(EDGE_BIRTHS, index * 7),
            "gender": pick(EDGE_GENDERS, index),
            "externalId": EDGE_EXTERNAL_IDS[index % len(EDGE_EXTERNAL_IDS)],
            "madid": pick(EDGE_MADIDS, index * 3),
        }
        for index in range(count)
    ]


@pytest.mark.parametrize("default_country", [None, "US", "GB"])
def test_fast_path_equals_reference_on_the_other_keys(default_country: str | None) -> None:
    # Given users with every edge case of city, state, postcode, date of birth, gender, external id and
    # advertising id
    records = extra_key_records()

    # When both implementations prepare them
    fast = prepare_columns(IdentifierColumns.from_records(records), default_country=default_country)
    reference = prepare_reference(records, default_country=default_country)

    # Then schema, rows and report are identical, every other key is sent, and each reached its drops
    assert fast.schema == reference.schema
    assert fast.schema[len(SCHEMA) :] == ("CT", "ST", "ZIP", "DOBY", "DOBM", "DOBD", "GEN", "MADID")
    assert fast.rows == reference.rows
    assert fast.report == reference.report
    for key in ("CT", "ST", "ZIP", "DOB", "GEN", "MADID"):
        assert fast.report.identifiers[key].unusable > 0, key


@pytest.mark.parametrize("default_country", [None, "GB", "US", "AU", "ES", "NZ"])
def test_fast_path_equals_reference_on_edge_cases(default_country: str | None) -> None:
    # Given every edge case under countries of every continent (each read by its own numbering plan),
    # one without a plan (AQ), and none
    countries = [None, "aq", *PLAN_COUNTRIES, "xx"]
    records = [
        {
            "user_id": f"u{index}",
            "email": EDGE_EMAILS[index % len(EDGE_EMAILS)],
            "phone": phone,
            "firstName": EDGE_NAMES[index % len(EDGE_NAMES)],
            "lastName": EDGE_NAMES[-1 - index % len(EDGE_NAMES)],
            "country": country,
        }
        for index, (phone, country) in enumerate(itertools.product(EDGE_PHONES, countries))
    ]

    # When both implementations prepare them
    fast = prepare_columns(IdentifierColumns.from_records(records), default_country=default_country)
    reference = prepare_reference(records, default_country=default_country)

    # Then rows and report are identical, and the cases did reach every drop reason
    assert fast.rows == reference.rows
    assert fast.report == reference.report
    assert set(fast.report.identifiers["PHONE"].unusable_reasons) == {
        "invalid_phone",
        "phone_too_short",
        "phone_too_long",
        "unknown_country_code",
    }
    assert fast.report.identifiers["EMAIL"].unusable > 0
    assert fast.report.identifiers["FN"].unusable > 0


def test_row_follows_the_multi_key_schema_with_hashed_values() -> None:
    # Given
    user = AudienceUser(
        user_id="u1", email="Mary@Example.com", phone="+1 (555) 987-6543", firstName="Mary", country="US"
    )

    # When
    prepared = prepare_audience([user])

    # Then
    assert prepared.schema == SCHEMA == ("EXTERN_ID", "EMAIL", "PHONE", "FN", "LN", "COUNTRY")
    assert prepared.rows == [("u1", MARY_SHA256, PHONE_SHA256, sha256_hex("mary"), "", sha256_hex("us"))]


def test_already_hashed_values_pass_through_lowercased() -> None:
    # Given values that are already SHA-256 digests, in capitals
    user = AudienceUser(user_id="u1", email=MARY_SHA256.upper(), phone=f" {PHONE_SHA256.upper()} ")

    # When
    prepared = prepare_audience([user])

    # Then they are not hashed a second time
    assert prepared.rows[0][1:3] == (MARY_SHA256, PHONE_SHA256)


def test_store_country_gives_national_phones_their_calling_code() -> None:
    # Given a UK national number and no customer country
    user = AudienceUser(user_id="u1", phone="07700 900123")

    # When the store is in GB
    prepared = prepare_audience([user], default_country="GB")

    # Then the number is hashed in international form, and COUNTRY is not guessed from the store
    assert prepared.rows[0][2] == sha256_hex("447700900123")
    assert prepared.rows[0][5] == ""


def test_customer_country_wins_over_store_country() -> None:
    # Given a US customer of a UK store
    user = AudienceUser(user_id="u1", phone="(555) 987-6543", country="US")

    # When
    prepared = prepare_audience([user], default_country="GB")

    # Then
    assert prepared.rows[0][2] == PHONE_SHA256


def test_record_without_email_or_phone_is_dropped_and_counted() -> None:
    # Given one user with only a name and one with an invalid e-mail
    users = [
        AudienceUser(user_id="u1", firstName="Mary", lastName="Major"),
        AudienceUser(user_id="u2", email="not-an-email"),
    ]

    # When
    prepared = prepare_audience(users)

    # Then nothing is uploaded and both are counted
    assert prepared.rows == []
    assert prepared.report.dropped_no_identifier == 2


def test_duplicate_user_id_keeps_the_first_usable_record() -> None:
    # Given the same user twice, the first without any usable identifier
    users = [
        AudienceUser(user_id="u1", email="broken"),
        AudienceUser(user_id="u1", email="mary@example.com"),
        AudienceUser(user_id="u1", email="other@example.com"),
    ]

    # When
    prepared = prepare_audience(users)

    # Then
    assert [row[1] for row in prepared.rows] == [MARY_SHA256]
    assert prepared.report.duplicate_user_ids == 1


def test_report_counts_usable_unusable_and_missing_per_identifier() -> None:
    # Given
    users = [
        AudienceUser(user_id="u1", email="mary@example.com", phone="12345", country="GB"),
        AudienceUser(user_id="u2", email="bad@", phone="+447700900123"),
        AudienceUser(user_id="u3", phone="07700 900123"),
    ]

    # When there is no store country
    report = prepare_audience(users).report

    # Then
    email, phone = report.identifiers["EMAIL"], report.identifiers["PHONE"]
    assert (email.present, email.usable, email.unusable, email.missing) == (2, 1, 1, 1)
    assert email.unusable_reasons == {"invalid_email": 1}
    assert phone.unusable_reasons == {"invalid_phone": 1, "unknown_country_code": 1}
    assert (report.total_records, report.rows_to_upload) == (3, 2)


def test_blank_values_count_as_missing_for_every_identifier() -> None:
    # Given values left out, empty and whitespace only, beside one usable of each
    columns = IdentifierColumns(
        user_ids=["u1", "u2", "u3", "u4"],
        emails=[None, "", "  ", "mary@example.com"],
        phones=["", None, "\t", "+15559876543"],
        first_names=["  ", None, "", "Mary"],
        last_names=[None, " ", "", "Major"],
        countries=["", None, " ", "US"],
    )

    # When
    report = prepare_columns(columns).report

    # Then each key has three missing values and one usable, none unusable
    for key in ("EMAIL", "PHONE", "FN", "LN", "COUNTRY"):
        quality = report.identifiers[key]
        assert (quality.present, quality.usable, quality.unusable, quality.missing) == (1, 1, 0, 3), key
    assert report.dropped_no_identifier == 3


def test_report_never_contains_raw_or_hashed_values() -> None:
    # Given
    users = [AudienceUser(user_id="u1", email="mary@example.com", firstName="Mary", phone="+15559876543")]

    # When
    text = prepare_audience(users).report.model_dump_json()

    # Then
    for secret in ("mary", "5559876543", MARY_SHA256, PHONE_SHA256):
        assert secret not in text.lower()


def test_unknown_store_country_is_a_validation_error() -> None:
    with pytest.raises(ValidationFailed) as raised:
        prepare_audience([], default_country="Atlantis")
    assert raised.value.field == "default_country"


def test_columns_of_different_lengths_are_refused() -> None:
    with pytest.raises(ValueError, match="differ in length"):
        IdentifierColumns(user_ids=["u1"], emails=[], phones=[], first_names=[], last_names=[], countries=[])


def test_limited_data_use_adds_the_data_processing_options_to_every_row() -> None:
    # Given a Californian and a New Yorker who asked for Limited Data Use, and a customer who did not
    users = [
        AudienceUser(user_id="ca", email="ca@example.com", country="US", state="CA", limitedDataUse=True),
        AudienceUser(user_id="ny", email="ny@example.com", country="US", state="NY", limitedDataUse=True),
        AudienceUser(user_id="gb", email="gb@example.com", country="GB", limitedDataUse=False),
    ]

    # When the upload rows are prepared
    prepared = prepare_audience(users)

    # Then the schema has the three columns after the identifiers (docs/platform-notes.md §3.8), and
    # each row says LDU in California, LDU located by the platform, or explicitly not LDU; the states
    # follow as the ST key
    assert prepared.schema == (
        *SCHEMA,
        "DATA_PROCESSING_OPTIONS",
        "DATA_PROCESSING_OPTIONS_COUNTRY",
        "DATA_PROCESSING_OPTIONS_STATE",
        "ST",
    )
    assert [row[6:9] for row in prepared.rows] == [(["LDU"], 1, 1000), (["LDU"], 0, 0), ([], 0, 0)]
    assert [row[9] for row in prepared.rows] == [sha256_hex("ca"), sha256_hex("ny"), ""]
    assert [row[1] for row in prepared.rows] == [sha256_hex(f"{u}@example.com") for u in ("ca", "ny", "gb")]


def test_without_any_limited_data_use_flag_the_schema_is_the_identifiers_alone() -> None:
    prepared = prepare_audience([AudienceUser(user_id="u1", email="a@example.com", state="CA")])
    assert prepared.schema == (*SCHEMA, "ST")
    assert len(prepared.rows[0]) == len(SCHEMA) + 1


def test_a_list_without_the_other_keys_sends_the_six_keys_alone() -> None:
    prepared = prepare_audience([AudienceUser(user_id="u1", email="a@example.com", country="GB")])
    assert prepared.schema == SCHEMA
    assert set(prepared.report.identifiers) == set(SCHEMA[1:])


def test_the_users_list_accepts_the_flag_under_its_camel_case_name() -> None:
    user = AudienceUser.model_validate({"user_id": "u1", "limitedDataUse": "true", "state": "CA"})
    assert user.limited_data_use is True
    assert "CA" not in repr(user)
