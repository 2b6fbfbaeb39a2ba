"""Dashboard JWT verification with pyjwt: RS256 signature from the issuer's JWKS, issuer,
audience (ID tokens) or ``client_id`` (Cognito access tokens), expiry."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jwt

from shared.errors import Unauthorized

MISSING_TOKEN_MESSAGE = "Authorization token is missing. Send 'Authorization: Bearer <JWT>'."
LEEWAY_SECONDS = 30

SigningKeyResolver = Callable[[str], Any]


class JwtVerifier:
    """Verifies bearer tokens issued by the configured user pool.

    ``signing_key_for(token)`` returns the public key for the token's ``kid``; in production it is a
    cached ``jwt.PyJWKClient`` over the issuer's JWKS URL, in unit tests a local key.
    """

    def __init__(self, *, issuer: str, audience: str, signing_key_for: SigningKeyResolver) -> None:
        self._issuer = issuer
        self._audience = audience
        self._signing_key_for = signing_key_for

    def verify(self, token: str) -> dict[str, Any]:
        """The verified claims of ``token``; ``Unauthorized`` with the reason otherwise."""
        try:
            key = self._signing_key_for(token)
            unverified = jwt.decode(token, options={"verify_signature": False})
            is_access = unverified.get("token_use") == "access"
            claims: dict[str, Any] = jwt.decode(
                token,
                key,
                algorithms=["RS256"],
                issuer=self._issuer,
                audience=None if is_access else self._audience,
                leeway=LEEWAY_SECONDS,
                options={"require": ["exp", "iat", "iss", "sub"], "verify_aud": not is_access},
            )
        except jwt.ExpiredSignatureError as exc:
            raise Unauthorized("Authorization token has expired.", remedy="Sign in again.") from exc
        except (jwt.PyJWTError, ValueError) as exc:
            raise Unauthorized(
                f"Authorization token is not valid: {exc}.", remedy="Sign in again to get a new token."
            ) from exc
        if is_access and claims.get("client_id") != self._audience:
            raise Unauthorized(
                "Authorization token was issued to another application.", remedy="Sign in again."
            )
        return claims


def bearer_token(headers: dict[str, str]) -> str:
    """The token in ``Authorization: Bearer``; ``Unauthorized`` if absent or malformed."""
    lowered = {k.lower(): v for k, v in headers.items()}
    scheme, _, value = lowered.get("authorization", "").strip().partition(" ")
    if scheme.lower() != "bearer" or not value.strip():
        raise Unauthorized(MISSING_TOKEN_MESSAGE, remedy="Sign in to the dashboard and retry.")
    return value.strip()
