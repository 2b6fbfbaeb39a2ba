"""Parameter encoding, appsecret_proof, ad account ids and log redaction."""

from __future__ import annotations

import pytest

from shared.platform.encoding import (
    ad_account_node,
    appsecret_proof,
    encode_params,
    redact_params,
    redact_url,
)
from tests.unit.platform.fake_graph import PROOF


def test_appsecret_proof_matches_the_reference_test_vector() -> None:
    # Given / When / Then
    assert appsecret_proof("app_secret", "access_token") == PROOF


def test_params_are_encoded_as_the_graph_api_expects() -> None:
    # Given
    params = {"name": "x", "ratio": 0.01, "count": 3, "on": True, "spec": {"b": 1, "a": [1]}, "unset": None}
    # When
    encoded = encode_params(params)
    # Then
    assert encoded == {"name": "x", "ratio": "0.01", "count": "3", "on": "true", "spec": '{"a":[1],"b":1}'}


@pytest.mark.parametrize("given", ["123", "act_123", 123, " act_123 "])
def test_ad_account_ids_get_exactly_one_act_prefix(given: str | int) -> None:
    # Given / When / Then
    assert ad_account_node(given) == "act_123"


def test_a_malformed_ad_account_id_is_rejected() -> None:
    # Given / When / Then
    with pytest.raises(ValueError, match="Not an ad account id"):
        ad_account_node("act_12/../me")


def test_secret_params_are_redacted_for_logs() -> None:
    # Given
    params = {
        "client_secret": "s",
        "code": "c",
        "fb_exchange_token": "t",
        "access_token": "a",
        "fields": "id",
    }
    # When
    redacted = redact_params(params)
    # Then
    assert set(redacted.values()) == {"[REDACTED]", "id"}
    assert redacted["fields"] == "id"


def test_secret_query_values_are_redacted_from_urls() -> None:
    # Given
    url = "https://graph.test/v25.0/me?access_token=SECRET-TOKEN&appsecret_proof=SECRET-PROOF&after=c1"
    # When
    redacted = redact_url(url)
    # Then
    assert "SECRET" not in redacted
    assert "after=c1" in redacted
