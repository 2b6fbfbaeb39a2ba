"""Dashboard JWT verification with pyjwt: RS256 signature from the issuer's JWKS, issuer,
audience (ID tokens) or ``client_id`` (Cognito access tokens), expiry."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jwt

from shared import deadline
from shared.errors import OutOfTime, Unauthorized

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


class BoundedJwkClient(jwt.PyJWKClient):
    """``jwt.PyJWKClient`` whose fetch of the issuer's JWKS fits the invocation's time
    (``shared.deadline``): its timeout is ``timeout`` or the time left, whichever is shorter, and a
    fetch with almost nothing left is not made but raised as ``OutOfTime`` (503, Retry-After)."""

    MIN_FETCH_SECONDS = 0.25

    def __init__(self, uri: str, *, timeout: float = 5.0, **options: Any) -> None:
        super().__init__(uri, timeout=timeout, **options)
        self._ceiling = timeout

    def fetch_data(self) -> Any:
        """The JWK Set, fetched within the time left."""
        self.timeout = deadline.call_timeout(self._ceiling)
        if self.timeout < self.MIN_FETCH_SECONDS:
            raise OutOfTime(
                "The request ran out of time before the sign-in keys could be fetched.",
                remedy="Retry after the time in Retry-After.",
            )
        return super().fetch_data()


def bearer_token(headers: dict[str, str]) -> str:
    """The token in ``Authorization: Bearer``; ``Unauthorized`` if absent or malformed."""
    lowered = {k.lower(): v for k, v in headers.items()}
    scheme, _, value = lowered.get("authorization", "").strip().partition(" ")
    if scheme.lower() != "bearer" or not value.strip():
        raise Unauthorized(MISSING_TOKEN_MESSAGE, remedy="Sign in to the dashboard and retry.")
    return value.strip()
