"""Ad accounts and pixels: listing, choosing the usable account, requiring a pixel."""

from __future__ import annotations

import pytest

from shared.platform.accounts import (
    AdAccount,
    Pixel,
    list_ad_accounts,
    list_pixels,
    require_pixel,
    select_business_account,
)
from shared.platform.client import GraphClient
from shared.platform.errors import BusinessAccountRequired, NoAdAccounts, PixelNotFound
from tests.unit.platform.fake_graph import FakeGraph


def account(account_id: str, *, business: bool = True, status: int = 1, tos: bool = False) -> AdAccount:
    return AdAccount(
        id=f"act_{account_id}",
        account_id=account_id,
        name=f"Account {account_id}",
        account_status=status,
        business_id="b1" if business else None,
        business_name="Shop Ltd" if business else None,
        tos_accepted=tos,
    )


def test_ad_accounts_are_read_with_business_terms_and_funding(
    client: GraphClient, fake_graph: FakeGraph
) -> None:
    # Given
    fake_graph.reply(
        {
            "data": [
                {
                    "id": "act_42",
                    "account_id": "42",
                    "name": "Shop",
                    "account_status": 1,
                    "business": {"id": "b1", "name": "Shop Ltd"},
                    "currency": "EUR",
                    "funding_source": "777",
                    "tos_accepted": {"custom_audience_tos": 1},
                },
                {"id": "act_43", "account_id": "43", "name": "Personal", "account_status": 1},
            ]
        }
    )
    # When
    accounts = list_ad_accounts(client)
    # Then
    assert fake_graph.last.url.path == "/v25.0/me/adaccounts"
    assert "business{id,name}" in fake_graph.query()["fields"]
    assert accounts == [
        AdAccount(
            id="act_42",
            account_id="42",
            name="Shop",
            account_status=1,
            business_id="b1",
            business_name="Shop Ltd",
            tos_accepted=True,
            currency="EUR",
            has_funding=True,
        ),
        AdAccount(id="act_43", account_id="43", name="Personal", account_status=1),
    ]


def test_no_accounts_at_all_raises_no_ad_accounts_found() -> None:
    # Given / When
    with pytest.raises(NoAdAccounts) as raised:
        select_business_account([])
    # Then
    assert raised.value.message == "No ad accounts found."
    assert "wait 5-10 minutes" in (raised.value.remedy or "")


def test_only_personal_accounts_raise_business_account_needed() -> None:
    # Given / When / Then
    with pytest.raises(BusinessAccountRequired):
        select_business_account([account("1", business=False)])


def test_only_inactive_business_accounts_raise_no_ad_accounts_found() -> None:
    # Given / When / Then
    with pytest.raises(NoAdAccounts):
        select_business_account([account("1", status=2)])


def test_the_active_business_account_with_accepted_terms_is_chosen() -> None:
    # Given
    accounts = [account("1", business=False), account("2", status=101), account("3"), account("4", tos=True)]
    # When / Then
    assert select_business_account(accounts).id == "act_4"


def test_a_preferred_usable_account_wins() -> None:
    # Given
    accounts = [account("3"), account("4", tos=True)]
    # When / Then
    assert select_business_account(accounts, preferred_id="3").id == "act_3"


def test_pixels_are_listed_on_the_prefixed_ad_account(client: GraphClient, fake_graph: FakeGraph) -> None:
    # Given
    fake_graph.reply({"data": [{"id": "p1", "name": "Shop pixel", "is_unavailable": False}]})
    # When
    pixels = list_pixels(client, "42")
    # Then
    assert fake_graph.last.url.path == "/v25.0/act_42/adspixels"
    assert pixels == [Pixel(id="p1", name="Shop pixel")]


def test_an_account_without_an_available_pixel_raises_no_pixel_found() -> None:
    # Given / When
    with pytest.raises(PixelNotFound) as raised:
        require_pixel([Pixel(id="p1", is_unavailable=True)])
    # Then
    assert raised.value.remedy == "Link a pixel (dataset) to the same ad account used in the service."
