"""Dashboard JWTs: RS256 signature, issuer, audience or client_id, expiry."""

from __future__ import annotations

import time
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from shared.auth.jwt import JwtVerifier, bearer_token
from shared.errors import Unauthorized

ISSUER = "https://cognito-idp.eu-west-1.amazonaws.com/pool-1"
CLIENT = "client-1"
KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
OTHER_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)


def token(key: Any = KEY, alg: str = "RS256", **overrides: Any) -> str:
    now = int(time.time())
    claims = {"sub": "user-1", "iss": ISSUER, "aud": CLIENT, "iat": now, "exp": now + 600, "token_use": "id"}
    claims.update(overrides)
    claims = {k: v for k, v in claims.items() if v is not None}
    return jwt.encode(claims, key, algorithm=alg, headers={"kid": "k1"})


@pytest.fixture
def verifier() -> JwtVerifier:
    return JwtVerifier(issuer=ISSUER, audience=CLIENT, signing_key_for=lambda _: KEY.public_key())


def test_a_valid_id_token_yields_its_claims(verifier: JwtVerifier) -> None:
    assert verifier.verify(token())["sub"] == "user-1"


def test_a_cognito_access_token_is_checked_by_client_id(verifier: JwtVerifier) -> None:
    # Given: access tokens carry client_id instead of aud
    good = token(aud=None, token_use="access", client_id=CLIENT)
    other = token(aud=None, token_use="access", client_id="another-app")
    # Then
    assert verifier.verify(good)["sub"] == "user-1"
    with pytest.raises(Unauthorized, match="another application"):
        verifier.verify(other)


def test_an_expired_token_is_rejected(verifier: JwtVerifier) -> None:
    with pytest.raises(Unauthorized, match="expired"):
        verifier.verify(token(exp=int(time.time()) - 3600))


@pytest.mark.parametrize(
    "bad",
    [
        {"iss": "https://evil.example/pool"},
        {"aud": "other-client"},
        {"sub": None},
        {"key": OTHER_KEY},
        {"key": "a-shared-secret-of-at-least-32-bytes!", "alg": "HS256"},
    ],
    ids=["issuer", "audience", "no-subject", "wrong-signature", "hs256-downgrade"],
)
def test_tokens_failing_a_check_are_rejected(verifier: JwtVerifier, bad: dict[str, Any]) -> None:
    key = bad.pop("key", KEY)
    alg = bad.pop("alg", "RS256")
    with pytest.raises(Unauthorized):
        verifier.verify(token(key=key, alg=alg, **bad))


def test_garbage_is_rejected(verifier: JwtVerifier) -> None:
    with pytest.raises(Unauthorized):
        verifier.verify("not.a.jwt")


def test_a_missing_bearer_header_is_unauthorized() -> None:
    with pytest.raises(Unauthorized, match="missing"):
        bearer_token({"X-Other": "x"})
