"""Every match key reaches the platform sandbox normalised and hashed exactly by the platform's rules
(docs/platform-notes.md §3.7): phone numbers of thirty countries read by their own numbering plans,
country names, city, state, postcode, date of birth, gender, external id and advertising id. The
expected values are written out here by hand, not computed by the service's normaliser."""

from __future__ import annotations

import hashlib
from typing import Any

import httpx

from local.connected import ConnectedOrg
from tests.audience_reference import PHONES_BY_COUNTRY
from tests.integration.test_audiences import created_in_full

# A country name as customers type it, for a few of the countries (the others are codes).
COUNTRY_NAMES = {"US": "United States", "GB": "U.K.", "DE": "Germany", "KR": "South Korea"}


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def members_by_schema(sandbox: httpx.Client, platform_id: str) -> list[dict[str, str]]:
    response = sandbox.get(f"/audiences/{platform_id}/members")
    response.raise_for_status()
    return [
        dict(zip(group["schema"], row, strict=True))
        for group in response.json()["members"]
        for row in group["rows"]
    ]


def test_phones_of_thirty_countries_arrive_as_their_international_numbers_hashed(
    api: httpx.Client, org: ConnectedOrg, sandbox: httpx.Client
) -> None:
    # Given one customer per country, each phone written as people there write it, the country given
    # as its code or its name
    users: list[dict[str, Any]] = [
        {
            "user_id": f"c-{country}",
            "phone": national,
            "country": COUNTRY_NAMES.get(country, country),
            "score": 0.9,
        }
        for country, national, _ in PHONES_BY_COUNTRY
    ]

    # When they become an audience
    response = api.post(
        "/platform-ads/audiences",
        json={"name": "Thirty countries", "productId": "sku-1", "modelId": "purchase", "users": users},
        headers=org.headers,
    )
    created = created_in_full(api, org, response)

    # Then the platform holds each international number (country code first, digits only) hashed,
    # and each country as its lower-case ISO code hashed
    received = {
        row["EXTERN_ID"]: row for row in members_by_schema(sandbox, created["platformCustomAudienceId"])
    }
    assert len(PHONES_BY_COUNTRY) >= 20
    for country, _, international in PHONES_BY_COUNTRY:
        row = received[f"c-{country}"]
        assert row["PHONE"] == sha(international), country
        assert row["COUNTRY"] == sha(country.lower()), country


def test_the_other_match_keys_arrive_normalised_by_the_platforms_rules(
    api: httpx.Client, org: ConnectedOrg, sandbox: httpx.Client
) -> None:
    # Given customers with every other key, written as shops export them
    users: list[dict[str, Any]] = [
        {
            "user_id": "u-1",
            "email": "ann@example.com",
            "country": "US",
            "state": "California",
            "city": "San Francisco",
            "postcode": "94105-1234",
            "dateOfBirth": "1985-03-07",
            "gender": "Female",
            "externalId": "shop-42",
            "madid": "6D92078A-8246-4BA4-AE5B-76104861E7DC",
            "score": 0.9,
        },
        {
            "user_id": "u-2",
            "email": "bo@example.com",
            "country": "GB",
            "state": "Greater London",
            "city": "St. Albans",
            "postcode": "SW1A 1AA",
            "dateOfBirth": "1990-12-31",
            "gender": "M",
            "score": 0.8,
        },
        {
            "user_id": "u-3",
            "email": "cy@example.com",
            "country": "FR",
            "city": "Zürich",
            "dateOfBirth": "1985-02-30",  # no such date: not sent
            "gender": "non-binary",  # not a value the platform takes: not sent
            "madid": "00000000-0000-0000-0000-000000000000",  # tracking limited: not sent
            "score": 0.7,
        },
    ]

    # When they become an audience
    response = api.post(
        "/platform-ads/audiences",
        json={"name": "Every key", "productId": "sku-1", "modelId": "purchase", "users": users},
        headers=org.headers,
    )
    created = created_in_full(api, org, response)

    # Then every key is in the upload's schema, each value normalised by its rule and hashed (the
    # advertising id and external id are not hashed), an unusable value sent empty
    rows = members_by_schema(sandbox, created["platformCustomAudienceId"])
    assert {"CT", "ST", "ZIP", "DOBY", "DOBM", "DOBD", "GEN", "MADID"} <= set(rows[0])
    received = {row["EXTERN_ID"]: row for row in rows}
    assert set(received) == {"shop-42", "u-2", "u-3"}
    first, second, third = received["shop-42"], received["u-2"], received["u-3"]
    assert (first["CT"], first["ST"], first["ZIP"]) == (sha("sanfrancisco"), sha("ca"), sha("94105"))
    assert (first["DOBY"], first["DOBM"], first["DOBD"]) == (sha("1985"), sha("03"), sha("07"))
    assert first["GEN"] == sha("f")
    assert first["MADID"] == "6d92078a-8246-4ba4-ae5b-76104861e7dc"
    assert (second["CT"], second["ST"], second["ZIP"]) == (
        sha("stalbans"),
        sha("greaterlondon"),
        sha("sw1a1"),
    )
    assert (second["DOBY"], second["DOBM"], second["DOBD"], second["GEN"]) == (
        sha("1990"),
        sha("12"),
        sha("31"),
        sha("m"),
    )
    assert third["CT"] == sha("zurich")
    assert (third["DOBY"], third["GEN"], third["MADID"], third["ST"], third["ZIP"]) == ("", "", "", "", "")
