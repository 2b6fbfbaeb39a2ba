"""OAuth helpers: dialog URL, code and long-lived exchanges, debug_token."""

from __future__ import annotations

from datetime import UTC, datetime
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from shared.platform.client import GraphClient
from shared.platform.errors import PlatformUnavailable, ReconnectRequired
from shared.platform.oauth import (
    TokenGrant,
    authorization_url,
    debug_token,
    exchange_code,
    exchange_long_lived,
)
from tests.unit.platform.fake_graph import APP_ID, APP_SECRET, FakeGraph, graph_error


def test_authorization_url_points_at_the_versioned_dialog_with_the_service_scopes() -> None:
    # Given / When
    url = authorization_url(
        dialog_url="https://www.facebook.test/",
        version="v25.0",
        app_id=APP_ID,
        redirect_uri="https://app.test/callback",
        state="signed-state",
    )
    # Then
    parts = urlsplit(url)
    assert f"{parts.scheme}://{parts.netloc}{parts.path}" == "https://www.facebook.test/v25.0/dialog/oauth"
    assert parse_qs(parts.query) == {
        "client_id": [APP_ID],
        "redirect_uri": ["https://app.test/callback"],
        "state": ["signed-state"],
        "response_type": ["code"],
        "scope": ["ads_management,ads_read,business_management"],
    }


def test_exchange_code_sends_the_app_credentials_and_returns_the_grant(
    client: GraphClient, fake_graph: FakeGraph
) -> None:
    # Given
    fake_graph.reply({"access_token": "user-token", "token_type": "bearer", "expires_in": 5183944})
    # When
    grant = exchange_code(client, "the-code", "https://app.test/callback")
    # Then
    assert grant == TokenGrant(access_token="user-token", expires_in=5183944, token_type="bearer")
    assert fake_graph.last.url.path == "/v25.0/oauth/access_token"
    assert fake_graph.query() == {
        "client_id": APP_ID,
        "client_secret": APP_SECRET,
        "redirect_uri": "https://app.test/callback",
        "code": "the-code",
    }


def test_exchange_code_is_not_retried_because_codes_are_single_use(
    client: GraphClient, fake_graph: FakeGraph
) -> None:
    # Given
    fake_graph.fail(httpx.ReadTimeout)
    # When
    with pytest.raises(PlatformUnavailable):
        exchange_code(client, "the-code", "https://app.test/callback")
    # Then
    assert len(fake_graph.requests) == 1


def test_a_used_code_asks_the_user_to_connect_again(client: GraphClient, fake_graph: FakeGraph) -> None:
    # Given
    fake_graph.reply(graph_error(100, 36009), status=400)
    # When / Then
    with pytest.raises(ReconnectRequired, match="already been used"):
        exchange_code(client, "the-code", "https://app.test/callback")


def test_exchange_long_lived_uses_the_fb_exchange_token_grant(
    client: GraphClient, fake_graph: FakeGraph
) -> None:
    # Given
    fake_graph.reply({"access_token": "long-token", "token_type": "bearer", "expires_in": 5183944})
    # When
    grant = exchange_long_lived(client, "short-token")
    # Then
    assert grant.access_token == "long-token"
    assert fake_graph.query()["grant_type"] == "fb_exchange_token"
    assert fake_graph.query()["fb_exchange_token"] == "short-token"


def test_a_token_grant_never_shows_its_token_in_repr() -> None:
    # Given / When / Then
    assert "secret-token" not in repr(TokenGrant(access_token="secret-token", expires_in=1))


def test_debug_token_uses_the_app_token_and_reads_the_token_facts(
    client: GraphClient, fake_graph: FakeGraph
) -> None:
    # Given
    fake_graph.reply(
        {
            "data": {
                "app_id": APP_ID,
                "type": "USER",
                "is_valid": True,
                "expires_at": 1793534400,
                "data_access_expires_at": 0,
                "scopes": ["ads_management", "ads_read"],
                "user_id": "555",
            }
        }
    )
    # When
    info = debug_token(client, "user-token")
    # Then
    assert fake_graph.last.headers["Authorization"] == f"Bearer {APP_ID}|{APP_SECRET}"
    assert fake_graph.query()["input_token"] == "user-token"
    assert info.is_valid is True
    assert info.expires_at == datetime.fromtimestamp(1793534400, tz=UTC)
    assert info.data_access_expires_at is None
    assert info.missing_scopes() == ("business_management",)


def test_debug_token_reports_the_reason_an_input_token_is_invalid(
    client: GraphClient, fake_graph: FakeGraph
) -> None:
    # Given
    fake_graph.reply(
        {
            "data": {
                "app_id": APP_ID,
                "is_valid": False,
                "error": {"code": 190, "subcode": 460, "message": "x"},
            }
        }
    )
    # When
    info = debug_token(client, "user-token")
    # Then
    assert info.is_valid is False
    assert (info.error_code, info.error_subcode) == (190, 460)


def test_a_token_of_another_app_is_never_valid(client: GraphClient, fake_graph: FakeGraph) -> None:
    # Given
    fake_graph.reply({"data": {"app_id": "999", "is_valid": True}})
    # When
    info = debug_token(client, "user-token")
    # Then
    assert info.is_valid is False
