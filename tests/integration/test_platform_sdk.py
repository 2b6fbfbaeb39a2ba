"""The sandbox driven by Meta's own Python SDK (`facebook-business`, a test dependency only).

The SDK is how most integrations talk to the platform, so the sandbox must accept what it sends:
node paths with a trailing slash (`/v26.0/act_<id>/`), the token and `appsecret_proof` in the query
string of every call, nested parameters as compact JSON in form fields, removals as a DELETE with the
payload in the query string, and identifiers it normalises and hashes itself
(docs/platform-notes.md §1.6, §2.4-§2.5, §3.1, §3.7, §5). Everything goes over real HTTP.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from facebook_business.adobjects.adaccount import AdAccount
from facebook_business.adobjects.customaudience import CustomAudience
from facebook_business.api import FacebookAdsApi
from facebook_business.exceptions import FacebookRequestError

from platform_sandbox import SandboxConfig, SandboxServer
from platform_sandbox.scenarios import BUSINESS_ACCOUNT_ID

pytestmark = pytest.mark.integration

ACCOUNT = f"act_{BUSINESS_ACCOUNT_ID}"
# docs/platform-notes.md §3.7: sha256("mary@example.com") and sha256("15559876543").
MARY_EMAIL_SHA256 = "f1904cf1a9d73a55fa5de0ac823c4403ded71afd4c3248d00bdcd0866552bb79"
PHONE_SHA256 = "1ef970831d7963307784fa8688e8fce101a15685d62aa765fed23f3a2c576a4e"


@pytest.fixture(scope="module")
def sandbox() -> Iterator[SandboxServer]:
    # The SDK sends appsecret_proof with every call, so the sandbox insists on it.
    with SandboxServer(SandboxConfig(require_appsecret_proof=True)) as server:
        yield server


@pytest.fixture
def admin(sandbox: SandboxServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=f"{sandbox.url}/_admin", timeout=10) as client:
        client.post("/reset").raise_for_status()
        yield client


def sdk_api(sandbox: SandboxServer, access_token: str) -> FacebookAdsApi:
    """The SDK initialised as its documentation says, pointed at the sandbox instead of the platform."""
    api = FacebookAdsApi.init(
        app_id=sandbox.config.app_id,
        app_secret=sandbox.config.app_secret,
        access_token=access_token,
        crash_log=False,  # its crash reporter would post tracebacks to the real platform
    )
    # The SDK builds every URL from its session's GRAPH base (session.py); it has no public setter.
    api._session.GRAPH = sandbox.url
    return api


@pytest.fixture
def api(sandbox: SandboxServer, admin: httpx.Client) -> FacebookAdsApi:
    token: str = admin.post("/tokens", json={}).json()["access_token"]
    return sdk_api(sandbox, token)


@pytest.fixture
def audience(api: FacebookAdsApi) -> CustomAudience:
    created: CustomAudience = AdAccount(ACCOUNT, api=api).create_custom_audience(
        params={
            CustomAudience.Field.name: "Predicted buyers",
            CustomAudience.Field.subtype: CustomAudience.Subtype.custom,
            CustomAudience.Field.customer_file_source: (CustomAudience.CustomerFileSource.user_provided_only),
            CustomAudience.Field.description: "Made by the SDK",
            CustomAudience.Field.retention_days: 30,
        }
    )
    return created


def members(admin: httpx.Client, audience_id: str) -> dict[str, Any]:
    body: dict[str, Any] = admin.get(f"/audiences/{audience_id}/members").raise_for_status().json()
    return body


def test_the_sdk_reads_an_ad_account(api: FacebookAdsApi, admin: httpx.Client) -> None:
    # When the SDK reads the business account (GET /v26.0/act_<id>/, with a trailing slash)
    account = AdAccount(ACCOUNT, api=api).api_get(
        fields=[
            AdAccount.Field.name,
            AdAccount.Field.account_status,
            AdAccount.Field.business,
            AdAccount.Field.tos_accepted,
            AdAccount.Field.currency,
            AdAccount.Field.is_personal,
        ]
    )
    # Then it gets the account the sandbox holds
    held = next(a for a in admin.get("/state").json()["ad_accounts"] if a["id"] == ACCOUNT)
    assert account[AdAccount.Field.id] == ACCOUNT
    assert account[AdAccount.Field.name] == held["name"]
    assert account[AdAccount.Field.account_status] == 1
    assert account[AdAccount.Field.business]["id"] == held["business"]
    assert account[AdAccount.Field.tos_accepted] == {"custom_audience_tos": 1}
    assert account[AdAccount.Field.is_personal] == 0
    # And the call went to the trailing-slash path the SDK builds, with the proof it computed
    logged = admin.get("/requests", params={"path": f"^/{ACCOUNT}/$"}).json()["requests"]
    assert [(entry["status"], entry["params"]["appsecret_proof"]) for entry in logged] == [
        (200, "[redacted]")
    ]


def test_the_sdk_reads_an_audience(api: FacebookAdsApi, audience: CustomAudience) -> None:
    # When the SDK reads the audience it created
    read = CustomAudience(audience[CustomAudience.Field.id], api=api).api_get(
        fields=[
            CustomAudience.Field.name,
            CustomAudience.Field.description,
            CustomAudience.Field.subtype,
            CustomAudience.Field.customer_file_source,
            CustomAudience.Field.operation_status,
        ]
    )
    # Then it is the audience as created, with nothing uploaded yet
    assert read[CustomAudience.Field.name] == "Predicted buyers"
    assert read[CustomAudience.Field.description] == "Made by the SDK"
    assert read[CustomAudience.Field.subtype] == "CUSTOM"
    assert read[CustomAudience.Field.customer_file_source] == "USER_PROVIDED_ONLY"
    assert read[CustomAudience.Field.operation_status]["code"] == 410


def test_the_sdk_reads_the_audience_fields_the_platform_documents(
    api: FacebookAdsApi, audience: CustomAudience
) -> None:
    # When the SDK asks for documented fields beyond the basics (docs/platform-notes.md §2.4)
    read = CustomAudience(audience[CustomAudience.Field.id], api=api).api_get(
        fields=[
            CustomAudience.Field.retention_days,
            CustomAudience.Field.is_value_based,
            CustomAudience.Field.time_created,
            CustomAudience.Field.time_updated,
            CustomAudience.Field.lookalike_audience_ids,
        ]
    )
    # Then each comes back, as the platform answers them, instead of "nonexisting field"
    assert read[CustomAudience.Field.retention_days] == 30
    assert read[CustomAudience.Field.is_value_based] is False
    assert read[CustomAudience.Field.time_updated] == read[CustomAudience.Field.time_created]
    assert read[CustomAudience.Field.lookalike_audience_ids] == []


def test_the_sdk_lists_audiences_with_ids_only_unless_it_asks_for_fields(
    api: FacebookAdsApi, audience: CustomAudience
) -> None:
    account = AdAccount(ACCOUNT, api=api)
    # When the SDK lists the account's audiences without fields, then with a name
    bare = [dict(item) for item in account.get_custom_audiences()]
    named = [dict(item) for item in account.get_custom_audiences(fields=[CustomAudience.Field.name])]
    # Then the bare list holds ids only, as the platform answers, and the other the name asked for
    audience_id = audience[CustomAudience.Field.id]
    assert bare == [{"id": audience_id}]
    assert named == [{"id": audience_id, "name": "Predicted buyers"}]


def test_the_sdk_adds_emails_it_normalises_and_hashes(
    api: FacebookAdsApi, audience: CustomAudience, admin: httpx.Client
) -> None:
    # When the SDK adds raw e-mails with the single-key schema; it trims, lower-cases and hashes them
    response = audience.add_users(
        CustomAudience.Schema.email_hash, [" Mary@Example.com ", "bob@example.com."]
    )
    # Then the sandbox counts both as valid
    body = response.json()
    assert (body["num_received"], body["num_invalid_entries"]) == (2, 0)
    # And it holds the hash the documentation gives for mary@example.com, never the address
    held = members(admin, audience[CustomAudience.Field.id])
    assert held["count"] == 2
    rows = held["members"][0]["rows"]
    assert [MARY_EMAIL_SHA256] in rows
    assert [hashlib.sha256(b"bob@example.com").hexdigest()] in rows


def test_the_sdk_adds_multi_key_rows_in_a_session(
    api: FacebookAdsApi, audience: CustomAudience, admin: httpx.Client
) -> None:
    # Given the multi-key schema, with the SDK's own per-key normalisation
    schema = [
        CustomAudience.Schema.MultiKeySchema.extern_id,
        CustomAudience.Schema.MultiKeySchema.email,
        CustomAudience.Schema.MultiKeySchema.phone,
        CustomAudience.Schema.MultiKeySchema.fn,
        CustomAudience.Schema.MultiKeySchema.ln,
        CustomAudience.Schema.MultiKeySchema.zip,
        CustomAudience.Schema.MultiKeySchema.country,
    ]
    people = [
        ["c-1", "Mary@Example.com", "+1 (555) 987-6543", "Mary", "O'Neil", "94107-1234", "US"],
        ["c-2", "bob@example.com", "15550000000", "Bob", "Smith", "10001", "us"],
    ]
    session = {"session_id": 9778993, "batch_seq": 1, "last_batch_flag": True, "estimated_num_total": 2}
    # When the SDK sends them in one session
    response = audience.add_users(schema, people, is_raw=True, session=session)
    # Then both rows are valid, the session is echoed, and the audience is no longer empty
    body = response.json()
    assert body["session_id"] == "9778993"
    assert (body["num_received"], body["num_invalid_entries"]) == (2, 0)
    held = members(admin, audience[CustomAudience.Field.id])
    assert held["members"][0]["schema"] == schema
    mary = next(row for row in held["members"][0]["rows"] if row[0] == "c-1")
    # EXTERN_ID plain, the rest hashed after normalising: the e-mail and phone match the documented vectors
    assert mary[1:3] == [MARY_EMAIL_SHA256, PHONE_SHA256]
    assert mary[4] == hashlib.sha256(b"oneil").hexdigest()
    read = audience.api_get(fields=[CustomAudience.Field.operation_status])
    assert read[CustomAudience.Field.operation_status]["code"] == 200


def test_the_sdk_removes_users(api: FacebookAdsApi, audience: CustomAudience, admin: httpx.Client) -> None:
    # Given two members
    audience.add_users(CustomAudience.Schema.email_hash, ["mary@example.com", "bob@example.com"])
    # When the SDK removes one (a DELETE carrying the payload in its query string)
    response = audience.remove_users(CustomAudience.Schema.email_hash, ["Bob@Example.com"])
    # Then only Mary is left
    assert response.json()["num_invalid_entries"] == 0
    assert members(admin, audience[CustomAudience.Field.id])["members"][0]["rows"] == [[MARY_EMAIL_SHA256]]


def test_the_sdk_renames_an_audience(api: FacebookAdsApi, audience: CustomAudience) -> None:
    # When the SDK renames the audience (POST /v26.0/<id>/)
    audience.api_update(params={CustomAudience.Field.name: "Likely buyers"})
    # Then reading it back gives the new name
    read = CustomAudience(audience[CustomAudience.Field.id], api=api).api_get(
        fields=[CustomAudience.Field.name]
    )
    assert read[CustomAudience.Field.name] == "Likely buyers"


def test_the_sdk_deletes_an_audience(api: FacebookAdsApi, audience: CustomAudience) -> None:
    # When the SDK deletes the audience (DELETE /v26.0/<id>/)
    audience.api_delete()
    # Then it no longer exists, and the SDK raises the platform's 100/33
    with pytest.raises(FacebookRequestError) as raised:
        CustomAudience(audience[CustomAudience.Field.id], api=api).api_get(fields=[CustomAudience.Field.name])
    assert (raised.value.api_error_code(), raised.value.api_error_subcode()) == (100, 33)
    assert list(AdAccount(ACCOUNT, api=api).get_custom_audiences()) == []


def test_a_bad_token_is_refused_on_the_sdks_paths(sandbox: SandboxServer, admin: httpx.Client) -> None:
    # Given the SDK with a token the platform never issued
    api = sdk_api(sandbox, "EAAnotatoken")
    # When it reads the account through its trailing-slash path
    with pytest.raises(FacebookRequestError) as raised:
        AdAccount(ACCOUNT, api=api).api_get(fields=[AdAccount.Field.name])
    # Then the token is refused (190), not answered as a missing object
    assert raised.value.api_error_code() == 190
    assert raised.value.http_status() == 400


def test_the_sdk_builds_a_value_based_lookalike(api: FacebookAdsApi, admin: httpx.Client) -> None:
    # Given a value-based audience created as the SDK's example does (is_value_based)
    account = AdAccount(ACCOUNT, api=api)
    seed: CustomAudience = account.create_custom_audience(
        params={
            CustomAudience.Field.name: "Value-Based Custom Audience",
            CustomAudience.Field.subtype: CustomAudience.Subtype.custom,
            CustomAudience.Field.is_value_based: True,
            CustomAudience.Field.customer_file_source: "PARTNER_PROVIDED_ONLY",
        }
    )
    # When the SDK adds 100 hashed e-mails with their LOOKALIKE_VALUE (pre-hashed: the SDK's own
    # normaliser would hash the value too, facebook-python-business-sdk#441)
    people = [[hashlib.sha256(f"buyer{i}@example.com".encode()).hexdigest(), i * 1.5] for i in range(100)]
    response = seed.add_users(["EMAIL", "LOOKALIKE_VALUE"], people, is_raw=True, pre_hashed=True)
    # Then every row is received, and the sandbox holds each member with its value
    assert (response.json()["num_received"], response.json()["num_invalid_entries"]) == (100, 0)
    held = members(admin, seed[CustomAudience.Field.id])
    assert held["is_value_based"] is True
    assert sorted(held["members"][0]["values"]) == [i * 1.5 for i in range(100)]
    read = seed.api_get(fields=[CustomAudience.Field.is_value_based])
    assert read[CustomAudience.Field.is_value_based] is True
    # And the lookalike the SDK's example asks for (type custom_ratio, a ratio and a country) is built
    lookalike: CustomAudience = account.create_custom_audience(
        params={
            CustomAudience.Field.name: "Value-Based lookalike",
            CustomAudience.Field.subtype: CustomAudience.Subtype.lookalike,
            CustomAudience.Field.origin_audience_id: seed[CustomAudience.Field.id],
            CustomAudience.Field.lookalike_spec: {"type": "custom_ratio", "ratio": 0.01, "country": "US"},
        }
    )
    made = lookalike.api_get(fields=[CustomAudience.Field.origin_audience_id])
    assert made[CustomAudience.Field.origin_audience_id] == seed[CustomAudience.Field.id]


def test_the_sdk_gets_the_refusal_of_a_value_based_lookalike_without_values(
    api: FacebookAdsApi, admin: httpx.Client
) -> None:
    # Given a value-based audience whose 100 members were sent with an empty value (the SDK example's
    # string form, as the guide's "unknown value")
    account = AdAccount(ACCOUNT, api=api)
    seed: CustomAudience = account.create_custom_audience(
        params={
            CustomAudience.Field.name: "No values",
            CustomAudience.Field.subtype: CustomAudience.Subtype.custom,
            CustomAudience.Field.is_value_based: "1",
            CustomAudience.Field.customer_file_source: CustomAudience.CustomerFileSource.user_provided_only,
        }
    )
    people = [[hashlib.sha256(f"buyer{i}@example.com".encode()).hexdigest(), ""] for i in range(100)]
    seed.add_users(["EMAIL", "LOOKALIKE_VALUE"], people, is_raw=True, pre_hashed=True)
    # When the SDK asks for its lookalike
    with pytest.raises(FacebookRequestError) as raised:
        account.create_custom_audience(
            params={
                CustomAudience.Field.name: "Value-Based lookalike",
                CustomAudience.Field.subtype: CustomAudience.Subtype.lookalike,
                CustomAudience.Field.origin_audience_id: seed[CustomAudience.Field.id],
                CustomAudience.Field.lookalike_spec: {"type": "custom_ratio", "ratio": 0.01, "country": "US"},
            }
        )
    # Then it raises the platform's refusal
    assert raised.value.api_error_code() == 2654
    assert "No Customer Values" in raised.value.api_error_message()


def test_the_sdk_gets_the_refusal_of_values_on_an_audience_that_is_not_value_based(
    api: FacebookAdsApi, audience: CustomAudience
) -> None:
    with pytest.raises(FacebookRequestError) as raised:
        audience.add_users(
            ["EMAIL", "LOOKALIKE_VALUE"], [[MARY_EMAIL_SHA256, 10]], is_raw=True, pre_hashed=True
        )
    assert raised.value.api_error_code() == 100
