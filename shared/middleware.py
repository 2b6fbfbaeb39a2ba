"""Powertools route middlewares that authenticate the caller and put the principal in the context.

Auth happens in the function, not an API Gateway authorizer: an HTTP API authorizer cannot return
the spec's 401 text ("API key is missing").
"""

from __future__ import annotations

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response
from aws_lambda_powertools.event_handler.middlewares import NextMiddleware
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError

from shared import wiring
from shared.auth.api_keys import extract_key, present_key, verify_key
from shared.errors import AccountClosed, Forbidden, UnsupportedMediaType
from shared.observability import logger
from shared.records.principals import ApiKeyPrincipal, SignedInUser, UserPrincipal

PRINCIPAL = "principal"


def require_api_key(app: APIGatewayHttpResolver, next_middleware: NextMiddleware) -> Response[str]:
    """Authenticate an API key from ``X-Service-Api-Key`` or ``Authorization: Bearer``."""
    principal = verify_key(extract_key(dict(app.current_event.headers)), wiring.api_key_store())
    logger.append_keys(org_id=principal.org_id, api_key_prefix=principal.prefix)
    app.append_context(principal=principal)
    return next_middleware(app)


def require_key_presented(app: APIGatewayHttpResolver, next_middleware: NextMiddleware) -> Response[str]:
    """401 unless a well-formed API key is presented, for a route that verifies the key itself on the
    write that serves the request (predict): no AWS call on the way in. A request that then fails
    validation (400) or sends a body that is not JSON (415) has its key verified before that error
    is told, so an unknown or revoked key learns only 401 whatever it sent (one read, paid by
    invalid requests only)."""
    presented = extract_key(dict(app.current_event.headers))
    present_key(presented)
    try:
        return next_middleware(app)
    except (RequestValidationError, UnsupportedMediaType):
        verify_key(presented, wiring.api_key_store())
        raise


def require_user(app: APIGatewayHttpResolver, next_middleware: NextMiddleware) -> Response[str]:
    """Authenticate a dashboard JWT and resolve the user's organization."""
    # PyJWT pulls in cryptography (~70 ms); API-key functions (predict, models) never verify a JWT.
    from shared.auth.jwt import bearer_token

    claims = wiring.jwt_verifier().verify(bearer_token(dict(app.current_event.headers)))
    user_id = str(claims["sub"])
    org_id = wiring.organization_store().org_of(user_id)
    if org_id is None:
        if wiring.organization_store().was_closed(user_id):
            raise AccountClosed(
                "This account was closed: its organization and data are deleted.",
                remedy="Nothing is left to do here. Ask your administrator if you need a new account.",
            )
        raise Forbidden(
            "Your user is not a member of any organization.",
            remedy="Ask your organization's administrator to add you.",
        )
    logger.append_keys(org_id=org_id, user_id=user_id)
    app.append_context(principal=UserPrincipal(org_id=org_id, user_id=user_id, email=claims.get("email")))
    return next_middleware(app)


def require_signed_in(app: APIGatewayHttpResolver, next_middleware: NextMiddleware) -> Response[str]:
    """Authenticate a dashboard JWT; the organization is resolved but not required (account closure,
    whose first step removes the memberships, must still answer the person who asked for it)."""
    from shared.auth.jwt import bearer_token

    claims = wiring.jwt_verifier().verify(bearer_token(dict(app.current_event.headers)))
    user_id = str(claims["sub"])
    org_id = wiring.organization_store().org_of(user_id)
    logger.append_keys(org_id=org_id, user_id=user_id)
    app.append_context(principal=SignedInUser(user_id=user_id, org_id=org_id, email=claims.get("email")))
    return next_middleware(app)


def signed_in_user(app: APIGatewayHttpResolver) -> SignedInUser:
    principal = app.context[PRINCIPAL]
    assert isinstance(principal, SignedInUser)
    return principal


def api_key_principal(app: APIGatewayHttpResolver) -> ApiKeyPrincipal:
    principal = app.context[PRINCIPAL]
    assert isinstance(principal, ApiKeyPrincipal)
    return principal


def user_principal(app: APIGatewayHttpResolver) -> UserPrincipal:
    principal = app.context[PRINCIPAL]
    assert isinstance(principal, UserPrincipal)
    return principal
