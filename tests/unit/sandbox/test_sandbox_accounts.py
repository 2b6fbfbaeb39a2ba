"""The user, ad accounts, pages and pixels (docs/platform-notes.md §1.7, §6.2, §6.4)."""

from __future__ import annotations

from collections.abc import Callable

from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from tests.unit.sandbox.samples import ACCOUNT, error_of

ACCOUNT_FIELDS = "id,account_id,name,business{id,name},account_status,tos_accepted,funding_source,currency"


def test_business_account_shows_its_business(graph: Callable[..., TestResponse]) -> None:
    # When the marketer lists ad accounts with their business
    data = graph("GET", f"/me/adaccounts?fields={ACCOUNT_FIELDS}").get_json()["data"]
    # Then the business-owned account names its business and accepted terms
    assert data == [
        {
            "id": ACCOUNT,
            "account_id": "100000000000001",
            "name": "Sandbox Shop - Business",
            "business": {"id": "20000000000000001", "name": "Sandbox Shop Ltd"},
            "account_status": 1,
            "tos_accepted": {"custom_audience_tos": 1},
            "funding_source": "FUNDING-1",
            "currency": "GBP",
        }
    ]


def test_personal_account_has_null_business(
    graph: Callable[..., TestResponse], use_scenario: Callable[[str], None]
) -> None:
    # Given only a personal ad account
    use_scenario("personal_account_only")
    # When accounts are listed
    data = graph("GET", "/me/adaccounts?fields=id,business").get_json()["data"]
    # Then its business is null
    assert data == [{"id": "act_100000000000002", "business": None}]


def test_accounts_are_paged_with_cursors(
    graph: Callable[..., TestResponse], use_scenario: Callable[[str], None]
) -> None:
    # Given two accounts, listed one per page
    use_scenario("several_accounts")
    first = graph("GET", "/me/adaccounts?limit=1").get_json()
    # When the client follows paging.next's cursor
    after = first["paging"]["cursors"]["after"]
    second = graph("GET", f"/me/adaccounts?limit=1&after={after}").get_json()
    # Then the first page points on, the last page has no next, and no account repeats
    assert "next" in first["paging"]
    assert "next" not in second["paging"]
    assert [first["data"][0]["id"], second["data"][0]["id"]] == ["act_100000000000002", ACCOUNT]


def test_no_ad_accounts_is_an_empty_list(
    graph: Callable[..., TestResponse], use_scenario: Callable[[str], None]
) -> None:
    # Given a user without ad accounts
    use_scenario("no_ad_accounts")
    # When accounts are listed
    response = graph("GET", "/me/adaccounts")
    # Then it is an empty list, not an error
    assert (response.status_code, response.get_json()) == (200, {"data": []})


def test_permissions_list_the_granted_scopes(graph: Callable[..., TestResponse]) -> None:
    # When the granted permissions are read
    data = graph("GET", "/me/permissions").get_json()["data"]
    # Then each scope of the token is granted
    assert {"permission": "ads_management", "status": "granted"} in data


def test_account_of_someone_else_does_not_exist(graph: Callable[..., TestResponse]) -> None:
    # When the marketer reads an ad account they have no role on
    response = graph("GET", "/act_999")
    # Then it looks like it does not exist
    assert (error_of(response)["code"], error_of(response)["error_subcode"]) == (100, 33)


def test_pixels_of_the_account_are_listed(graph: Callable[..., TestResponse]) -> None:
    # When the account's pixels are listed
    data = graph("GET", f"/{ACCOUNT}/adspixels?fields=id,name").get_json()["data"]
    # Then the scenario's pixel is there
    assert data == [{"id": "30000000000000001", "name": "Sandbox Shop Pixel"}]


def test_pages_of_the_user_are_listed(graph: Callable[..., TestResponse]) -> None:
    # When the user's pages are listed
    data = graph("GET", "/me/accounts?fields=id,name,tasks").get_json()["data"]
    # Then the page shows the tasks the user has on it
    assert data[0]["id"] == "40000000000000001"
    assert "ADVERTISE" in data[0]["tasks"]


def test_read_only_token_cannot_write(client: FlaskClient) -> None:
    # Given a token with ads_read only
    token = client.post("/_admin/tokens", json={"scopes": ["ads_read"]}).get_json()["access_token"]
    # When it tries to create an audience
    response = client.post(
        f"/v25.0/{ACCOUNT}/customaudiences",
        headers={"Authorization": f"Bearer {token}"},
        data={"name": "x", "subtype": "CUSTOM", "customer_file_source": "USER_PROVIDED_ONLY"},
    )
    # Then ads_management is missing
    assert error_of(response)["code"] == 294
