"""The auth matrix, generated from ``template.yaml``: every route, every way of being unauthenticated.

For each route the gateway serves (real payload-2.0 events through the local gateway): no
credentials, a malformed credential, an expired, wrong-issuer or wrong-audience JWT, a revoked or
unknown API key → 401; another organization's resource → 404. The routes come from the template
and their scheme from ``openapi.json``, so a new route is in the matrix the moment it exists, and a
new path parameter without an owner's resource below fails the suite.
"""

from __future__ import annotations

import gzip
import json
import re
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import jwt
import moto.cognitoidp
import pytest

from local.connected import ConnectedOrg
from local.seed import DemoCredentials, create_user, sign_in
from local.stack import LocalStack
from local.template import ROOT, Route, functions, load_template, routes
from scripts.openapi import PUBLIC_ENDPOINTS, PUBLIC_PAGES

# Routes without credentials: the hosted checkout's pages (shoppers) and the site events endpoint (the
# shop's pages, with a site key that can only send; tests/integration/test_site_events.py).
PUBLIC = PUBLIC_PAGES | PUBLIC_ENDPOINTS

TEMPLATE = load_template()
ROUTES = routes(TEMPLATE)
FUNCTIONS = functions(TEMPLATE)
OPENAPI = json.loads((ROOT / "openapi.json").read_text())
UNKNOWN = "does-not-exist"


def scheme_of(route: Route) -> str:
    """The route's declared security scheme (``apiKey`` or ``bearerJwt``), or ``public`` for the
    hosted checkout's pages, which shoppers open without credentials."""
    operation = OPENAPI["paths"][route.path][route.method.lower()]
    if operation["security"] == []:
        return "public"
    (requirement,) = operation["security"]
    (scheme,) = requirement
    return str(scheme)


def path_of(route: Route, values: dict[str, str] | None = None) -> str:
    return re.sub(r"\{(\w+)\}", lambda m: (values or {}).get(m.group(1), UNKNOWN), route.path)


def call(api: httpx.Client, route: Route, headers: dict[str, str], path: str | None = None) -> httpx.Response:
    """An invalid request (empty body): authentication must be told before validation."""
    body = {} if route.method in {"POST", "PUT"} else None
    return api.request(route.method, path or path_of(route), json=body, headers=headers)


def valid_call(api: httpx.Client, route: Route, headers: dict[str, str], path: str) -> httpx.Response:
    """A valid request: the body and query of the route's sample event."""
    event = json.loads((ROOT / "events" / f"{FUNCTIONS[route.function].code_dir.name}.json").read_text())
    query = event.get("rawQueryString", "")
    return api.request(
        route.method,
        f"{path}?{query}" if query else path,
        content=event.get("body") or None,
        headers={**headers, "Content-Type": "application/json"},
    )


def route_id(route: Route) -> str:
    return f"{route.method} {route.path}"


def moto_signing_key() -> tuple[str, Any]:
    """The key moto's Cognito signs its tokens with (its resources ship it), to forge real-looking
    tokens whose only fault is the one under test."""
    path = Path(moto.cognitoidp.__file__).parent / "resources" / "jwks-private.json.gz"
    jwk = json.loads(gzip.decompress(path.read_bytes()))
    return jwk["kid"], jwt.algorithms.RSAAlgorithm.from_jwk(jwk)


def resigned(token: str, **changes: Any) -> str:
    """``token`` with ``changes`` to its claims, signed again with the pool's own key."""
    kid, key = moto_signing_key()
    claims = {**jwt.decode(token, options={"verify_signature": False}), **changes}
    return jwt.encode(claims, key, algorithm="RS256", headers={"kid": kid})


# --- every route declares a scheme ------------------------------------------------------------------


def test_every_route_of_the_template_declares_how_it_is_authenticated() -> None:
    assert ROUTES
    for route in ROUTES:
        public = (route.method.lower(), route.path) in PUBLIC
        schemes = {"apiKey", "bearerJwt", "paymentsSignature"}
        assert scheme_of(route) == "public" if public else scheme_of(route) in schemes, route_id(route)


# Every route but the public ones (tests/integration/test_payments_checkout.py and test_site_events.py).
ROUTES = [route for route in ROUTES if (route.method.lower(), route.path) not in PUBLIC]


# --- 401 --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("route", ROUTES, ids=route_id)
def test_without_credentials_every_route_answers_401(api: httpx.Client, route: Route) -> None:
    response = call(api, route, {})
    assert response.status_code == 401, response.text
    assert response.json()["error"]["code"] == "unauthorized"


@pytest.mark.parametrize("route", ROUTES, ids=route_id)
def test_a_malformed_credential_answers_401(api: httpx.Client, route: Route) -> None:
    for headers in ({"Authorization": "Bearer not.a.token"}, {"Authorization": "Basic abc"}):
        if scheme_of(route) == "apiKey":
            headers = {"X-Service-Api-Key": "sk_malformed"}
        response = call(api, route, headers)
        assert response.status_code == 401, (headers, response.text)


JWT_ROUTES = [route for route in ROUTES if scheme_of(route) == "bearerJwt"]
KEY_ROUTES = [route for route in ROUTES if scheme_of(route) == "apiKey"]

FORGERIES: dict[str, Callable[[str], str]] = {
    "expired": lambda token: resigned(token, exp=int(time.time()) - 3600, iat=int(time.time()) - 7200),
    "wrong-issuer": lambda token: resigned(token, iss="https://cognito-idp.eu-west-1.amazonaws.com/other"),
    "wrong-audience": lambda token: resigned(token, aud="another-app-client"),
    "bad-signature": lambda token: token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB"),
}


@pytest.fixture(scope="module")
def genuine_token(demo: DemoCredentials, stack: LocalStack) -> str:
    token = sign_in(stack, demo.email, demo.password)
    return token


def test_the_forgeries_differ_from_a_genuine_token_only_in_their_fault(
    api: httpx.Client, genuine_token: str
) -> None:
    # A control: the same claims, re-signed unchanged, are accepted, so each 401 below is its fault's
    response = api.get("/platform-ads/status", headers={"Authorization": f"Bearer {resigned(genuine_token)}"})
    assert response.status_code == 200, response.text


@pytest.mark.parametrize("forgery", FORGERIES)
@pytest.mark.parametrize("route", JWT_ROUTES, ids=route_id)
def test_a_faulty_jwt_answers_401(api: httpx.Client, route: Route, forgery: str, genuine_token: str) -> None:
    token = FORGERIES[forgery](genuine_token)
    response = call(api, route, {"Authorization": f"Bearer {token}"})
    assert response.status_code == 401, response.text


@pytest.fixture(scope="module")
def revoked_key(stack: LocalStack, genuine_token: str) -> str:
    api = httpx.Client(base_url=stack.api_url, timeout=30)
    headers = {"Authorization": f"Bearer {genuine_token}"}
    created = api.post("/dashboard/api-keys", json={"label": "revoked in the matrix"}, headers=headers)
    assert created.status_code == 201, created.text
    revoked = api.delete(f"/dashboard/api-keys/{created.json()['keyId']}", headers=headers)
    assert revoked.status_code in (200, 204), revoked.text
    key: str = created.json()["key"]
    return key


@pytest.mark.parametrize("route", KEY_ROUTES, ids=route_id)
def test_a_revoked_or_unknown_api_key_answers_401(
    api: httpx.Client, route: Route, revoked_key: str, demo: DemoCredentials
) -> None:
    unknown = demo.api_key[:-6] + "zzzzzz"
    for key in (revoked_key, unknown):
        response = call(api, route, {"X-Service-Api-Key": key})
        assert response.status_code == 401, response.text


# --- 404: another organization's resource ------------------------------------------------------------


def an_audience(api: httpx.Client, org: ConnectedOrg) -> str:
    from tests.integration.test_sample_events import sample_body

    body = {**sample_body("create_audience"), "name": f"matrix {uuid.uuid4().hex[:6]}"}
    created = api.post("/platform-ads/audiences", json=body, headers=org.headers)
    assert created.status_code == 201, created.text
    audience_id: str = created.json()["audienceId"]
    return audience_id


def a_key(api: httpx.Client, org: ConnectedOrg) -> str:
    created = api.post("/dashboard/api-keys", json={"label": "owned"}, headers=org.headers)
    assert created.status_code == 201, created.text
    key_id: str = created.json()["keyId"]
    return key_id


# Path parameter -> the owner organization's resource. A route with a new parameter fails below
# until its owner's resource is added here.
OWNED: dict[str, Callable[[httpx.Client, ConnectedOrg, DemoCredentials], str]] = {
    "audienceId": lambda api, org, demo: an_audience(api, org),
    "keyId": lambda api, org, demo: a_key(api, org),
    "modelName": lambda api, org, demo: demo.models[0],
}
OWNED_ROUTES = [route for route in ROUTES if "{" in route.path]


def test_every_path_parameter_has_an_owned_resource_in_the_matrix() -> None:
    parameters = {name for route in OWNED_ROUTES for name in re.findall(r"\{(\w+)\}", route.path)}
    assert parameters <= set(OWNED), parameters - set(OWNED)


@pytest.fixture(scope="module")
def outsider(stack: LocalStack) -> dict[str, str]:
    """A signed-in user of another organization, with an API key of its own."""
    api = httpx.Client(base_url=stack.api_url, timeout=30)
    org_id = f"org-{uuid.uuid4().hex[:8]}"
    email = f"{org_id}@example.com"
    _, password = create_user(stack, org_id, email)
    jwt_headers = {"Authorization": f"Bearer {sign_in(stack, email, password)}"}
    created = api.post("/dashboard/api-keys", json={"label": "outsider"}, headers=jwt_headers)
    assert created.status_code == 201, created.text
    return {**jwt_headers, "key": created.json()["key"]}


@pytest.mark.parametrize("route", OWNED_ROUTES, ids=route_id)
def test_another_organizations_resource_is_not_found(
    api: httpx.Client,
    route: Route,
    org: ConnectedOrg,
    demo: DemoCredentials,
    outsider: dict[str, str],
) -> None:
    # Given a resource that exists in its owner's organization (the demo org owns the models)
    owner_values = {name: OWNED[name](api, org, demo) for name in re.findall(r"\{(\w+)\}", route.path)}
    # When someone of another organization asks for it
    if scheme_of(route) == "apiKey":
        headers = {"X-Service-Api-Key": outsider["key"]}
    else:
        headers = {"Authorization": outsider["Authorization"]}
    response = valid_call(api, route, headers, path_of(route, owner_values))
    # Then it does not exist for them
    assert response.status_code == 404, response.text
