"""Fuzzing every route of the committed ``openapi.json`` with schemathesis, through the local gateway.

Each operation gets generated requests, valid and invalid (schemathesis' examples, coverage and
fuzzing phases: boundary values, missing and extra fields, wrong types, undeclared content types,
random data), sent with valid credentials: the dashboard JWT or an API key of an organization made
for the fuzzer, with a connected ad account and trained models. Every answer must be no 5xx, a
status the document lists for the operation, the documented content type, headers and body, and
authentication enforced. The same operations are fuzzed without credentials (and with the empty
ones schemathesis makes up): every answer must be 401.

Then a stateful phase walks the document's links (``scripts/openapi.py``, ``LINKS``) with
schemathesis' state machine: create -> read -> retry with the same Idempotency-Key -> delete, each step
with the ids the service answered, so cases reach the core instead of "no such audience". Every
operation must have been answered 2xx at least once over the whole run (``NO_SUCCESS_WITHOUT`` lists
those no request reaches yet, and why). Where a step needs what only a person or the platform can do (the
consent dialog of the OAuth flow), the test does it as the dashboard would; a disconnect is followed
by connecting again, so later cases still reach the connected paths.

Bounded and reproducible: a fixed seed and derandomized Hypothesis, so every run sends the same
cases; loopback only. A finding is fixed in the service, or in the schema's source
(``scripts/openapi.py``, the request models' documented rules) when the document, not the service,
is wrong.
"""

from __future__ import annotations

import ipaddress
from collections import defaultdict
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.core.transport import Response
from schemathesis.generation import GenerationMode
from schemathesis.generation.case import Case
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    ignored_auth,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from local.connected import ConnectedOrg, connected_org, reconnect
from local.platform_browser import decide
from local.seed import PURCHASE_MODEL, seed_models
from local.stack import LocalStack
from local.template import ROOT

pytestmark = pytest.mark.integration

OPENAPI = ROOT / "openapi.json"
SEED = 20261123
# Random cases per operation in the fuzzing phase, on top of the examples and coverage phases.
EXAMPLES_WITH_CREDENTIALS = 10
EXAMPLES_WITHOUT_CREDENTIALS = 5
SITE_EVENTS = "POST /site-events"


def shop_page_origin(base_url: str, fuzz_org: ConnectedOrg) -> str:
    """The origin of a page of the site as declared now (the walk may have declared other domains):
    what the browser sends with the snippet's events."""
    with httpx.Client(base_url=base_url, timeout=30, headers=fuzz_org.headers) as api:
        domains = api.get("/platform-ads/events/site").json()["domains"]
    return f"https://{domains[0]}" if domains else "https://shop.example.com"


# The stateful phase: scenarios, each a walk of up to STATEFUL_STEPS linked calls.
STATEFUL_SCENARIOS = 40
AUDIENCE_SCENARIOS = 25
STATEFUL_STEPS = 8
# Operations no request of the run gets a 2xx from yet, and why (every other must get one).
_PAYMENTS_SHOP = (
    "a shopper's page of the organization's hosted checkout: needs a connected payments account and the "
    "product in a synced shop, which the fuzzer's organization has not (tests/integration/"
    "test_payments_checkout.py)"
)
_SYNCED_SHOP = (
    "needs the shop's files in the data bucket, which arrive by a presigned multipart POST to S3, "
    "outside the document (tests/integration/test_data_source.py)"
)
_AUDIENCE = (
    "needs an audience of the fuzzer's organization: no generated create succeeded in the measured run "
    "(generated users carry no identifier the platform matches, a segment needs a synced shop, an "
    "uploadId a file that never arrived); tests/integration/test_audiences.py and test_publishing.py "
    "prove it"
)
NO_SUCCESS_WITHOUT: dict[str, str] = {
    "GET /checkout/{orgId}/{productId}": _PAYMENTS_SHOP,
    "POST /checkout/{orgId}/{productId}": f"{_PAYMENTS_SHOP}; and its success is a 303 to the provider",
    "POST /payments/webhook": "only the provider can sign a delivery "
    "(tests/integration/test_payments_webhooks.py)",
    "POST /payments/connect/callback": "needs the state the provider's onboarding returns once a person "
    "submits its page (tests/integration/test_payments_connection.py)",
    "POST /platform-ads/account/closure": "its success deletes the organization the whole run uses "
    "(tests/integration/test_account_closure.py)",
    "POST /platform-ads/data-source/sync": _SYNCED_SHOP,
    "POST /dashboard/models/retrain": f"retrains on the synced shop: {_SYNCED_SHOP}",
    "POST /platform-ads/targeting/preview": f"scores the synced shop's customers: {_SYNCED_SHOP}",
    "POST /site-events": "needs a live site key and the Origin of a page of a declared domain (a browser "
    "header the document does not carry); the walk sends both, and the organization's pixel must take "
    "them (tests/integration/test_site_events.py)",
    "DELETE /dashboard/api-keys/{keyId}": "the walk's revocations in the measured run drew made-up ids "
    "(tests/integration/test_dashboard_api_keys.py)",
    "POST /platform-ads/audiences": _AUDIENCE,
    "DELETE /platform-ads/audiences/{audienceId}": _AUDIENCE,
    "DELETE /platform-ads/audiences/{audienceId}/advert": _AUDIENCE,
    "GET /platform-ads/audiences/{audienceId}/ads-manager-link": _AUDIENCE,
    "GET /platform-ads/audiences/{audienceId}/lift": _AUDIENCE,
    "POST /platform-ads/audiences/{audienceId}/advert": _AUDIENCE,
    "POST /platform-ads/audiences/{audienceId}/refresh": _AUDIENCE,
    "POST /platform-ads/audiences/{audienceId}/sync": _AUDIENCE,
}
# What the service promises: no 5xx, a documented status, content type, headers and body, and
# authentication enforced. Left out: positive_data_acceptance (the document now carries the models'
# cross-field rules, tests/unit/test_openapi_bodies.py, but a valid body can still be refused for what
# no schema can know: a name that is not the organization's, a state the platform never issued, a
# domain's pages, an upload whose file never arrived), negative_data_rejection (lenient parsing such as
# a date given as 0 is not a defect), and unsupported_method (a method without a route is answered by
# API Gateway itself, 404 {"message": "Not Found"}, which the service cannot change).
CHECKS = [
    schemathesis.checks.not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    ignored_auth,
]
# The answer API Gateway gives, before any function runs, to a method or path it has no route for.
GATEWAY_NOT_FOUND = {"message": "Not Found"}


def fuzz_settings(max_examples: int) -> settings:
    """Hypothesis settings for one fuzzed operation: derandomized, so every run draws the same cases."""
    return settings(
        max_examples=max_examples,
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )


def loaded_schema(*, coverage: bool) -> schemathesis.schemas.BaseSchema:
    """The committed document, with a fixed seed; the unexpected-method probes of the coverage phase
    are left out, since API Gateway, not the service, answers a method a path does not have."""
    schema = schemathesis.openapi.from_path(OPENAPI)
    schema.config.seed = SEED
    schema.config.phases.coverage.enabled = coverage
    schema.config.phases.coverage.unexpected_methods = set()
    return schema


# The gateway's port is known only once the stack runs, so each call names its base URL.
with_credentials = loaded_schema(coverage=True)
# Model routes get the fuzzer organization's real model, so cases reach scoring, not just 404.
with_credentials.config.update(parameters={"path.modelName": PURCHASE_MODEL})
without_credentials = loaded_schema(coverage=False)


def loopback(url: str) -> str:
    host = urlsplit(url).hostname or ""
    assert ipaddress.ip_address(host).is_loopback, f"the fuzzer only ever targets loopback, not {url}"
    return url


@pytest.fixture(scope="module", autouse=True)
def routes_not_throttled(stack: LocalStack) -> Iterator[None]:
    """The fuzzer sends each route's cases as fast as the stack answers, past the routes' API Gateway
    throttles (which would answer 429 before any function runs, the unauthenticated cases included):
    lifted for it; tests/integration/test_fair_shares.py proves them."""
    assert stack.gateway is not None
    with stack.gateway.throttles.lifted():
        yield


@pytest.fixture(scope="module")
def base_url(stack: LocalStack) -> str:
    return loopback(stack.api_url)


@pytest.fixture(scope="module")
def fuzz_org(stack: LocalStack) -> ConnectedOrg:
    """An organization of the fuzzer's own, connected to the sandbox, with trained models, so cases
    reach past "not connected" and "no such model" and nothing another test uses is touched."""
    with httpx.Client(base_url=stack.api_url, timeout=30) as api:
        org = connected_org(stack, api)
    seed_models(org.org_id, n_users=300)
    with httpx.Client(base_url=stack.api_url, timeout=30, headers=org.headers) as api:
        # A declared site, so that issuing its key (which needs a domain) can succeed
        declared = api.post("/platform-ads/events/site", json={"domains": ["shop.example.com"]})
        assert declared.status_code == 200, declared.text
    return org


@pytest.fixture(scope="module")
def api_key(stack: LocalStack, fuzz_org: ConnectedOrg) -> str:
    with httpx.Client(base_url=stack.api_url, timeout=30) as api:
        created = api.post("/dashboard/api-keys", json={"label": "fuzz"}, headers=fuzz_org.headers)
    assert created.status_code == 201, created.text
    key: str = created.json()["key"]
    return key


def credentials(case: Case, fuzz_org: ConnectedOrg, api_key: str) -> dict[str, str]:
    """The header the operation's security scheme asks for."""
    requirements = case.operation.definition.raw["security"]
    if not requirements:
        return {}  # a shopper's page: public
    (requirement,) = requirements
    if "paymentsSignature" in requirement:
        return {}  # only the provider can sign a delivery: a made-up one is refused as none is
    if "apiKey" in requirement:
        return {"X-Service-Api-Key": api_key}
    return dict(fuzz_org.headers)


# Each operation's statuses over the run (with credentials), for the last test, and one answer of
# each status (what it said), so a failure says why.
ANSWERED: defaultdict[str, list[int]] = defaultdict(list)
SAID: dict[tuple[str, int], str] = {}
DISCONNECT = "POST /platform-ads/disconnect"
CONNECT = "POST /platform-ads/connect"
CONNECT_CALLBACK = "POST /platform-ads/connect/callback"


def approved_connection(base_url: str, fuzz_org: ConnectedOrg) -> dict[str, Any] | None:
    """Start connecting, approve the sandbox's consent dialog as a person would, and return the body the
    dashboard's callback page then posts (the redirect's code and state)."""
    with httpx.Client(base_url=base_url, timeout=30, headers=fuzz_org.headers) as api:
        started = api.post("/platform-ads/connect")
    redirect = decide(started.json()["authorizationUrl"])
    if redirect.status_code not in (301, 302, 303):
        return None
    query = dict(httpx.URL(redirect.headers["location"]).params)
    return {"state": query.get("state", ""), "code": query.get("code")}


def answered(case: Case, status: int, text: str, stack: LocalStack, fuzz_org: ConnectedOrg) -> None:
    """Record the answer; after a disconnect, connect the fuzzer's organization again."""
    ANSWERED[case.operation.label].append(status)
    SAID.setdefault((case.operation.label, status), text[:200])
    if case.operation.label == DISCONNECT and status == 200:
        with httpx.Client(base_url=stack.api_url, timeout=30) as api:
            reconnect(stack, api, fuzz_org)


@with_credentials.parametrize()
@fuzz_settings(EXAMPLES_WITH_CREDENTIALS)
def test_every_answer_with_credentials_is_documented_and_no_5xx(
    case: Case, base_url: str, stack: LocalStack, fuzz_org: ConnectedOrg, api_key: str
) -> None:
    if case.operation.label == CONNECT_CALLBACK and not any(
        200 <= code < 300 for code in ANSWERED[CONNECT_CALLBACK]
    ):
        # Once, what the dashboard's callback page posts after the person approved the consent dialog
        case.body = approved_connection(base_url, fuzz_org) or case.body
    response = case.call_and_validate(
        base_url=base_url, headers=credentials(case, fuzz_org, api_key), checks=CHECKS
    )
    answered(case, response.status_code, response.text, stack, fuzz_org)


@without_credentials.parametrize()
@fuzz_settings(EXAMPLES_WITHOUT_CREDENTIALS)
def test_every_answer_without_credentials_is_401(case: Case, base_url: str) -> None:
    response = case.call_and_validate(base_url=base_url, checks=CHECKS)
    if not case.operation.definition.raw["security"]:
        return  # a shopper's page needs no credentials: the checks above are what it owes
    if response.status_code == 404 and response.json() == GATEWAY_NOT_FOUND:
        return  # API Gateway has no route for this path (say an empty path parameter): nothing ran
    assert response.status_code == 401, response.text


def stateful_schema(*, path_regex: str | None = None) -> schemathesis.schemas.BaseSchema:
    """The document for a stateful walk (of the paths ``path_regex`` matches): valid data only, since
    the walk is to reach the core (the phases above send the invalid)."""
    schema = loaded_schema(coverage=False)
    schema.config.generation.update(modes=[GenerationMode.POSITIVE])
    schema.config.update(parameters={"path.modelName": PURCHASE_MODEL})
    return schema if path_regex is None else schema.include(path_regex=path_regex)


# The walks: every operation of the document, then the audiences' family alone (its create is one
# root among fifty in the first, and most of the document's links start there).
WALKS = {
    "all": (stateful_schema(), STATEFUL_SCENARIOS),
    "audiences": (
        stateful_schema(path_regex="^/platform-ads/(audiences|activations|uploads)"),
        AUDIENCE_SCENARIOS,
    ),
}
# ignored_auth is left to the phases above (it re-sends every success without credentials).
STATEFUL_CHECKS = [check for check in CHECKS if check is not ignored_auth]


@pytest.mark.parametrize("walk", sorted(WALKS))
def test_linked_walks_are_documented_and_no_5xx(
    walk: str, base_url: str, stack: LocalStack, fuzz_org: ConnectedOrg, api_key: str
) -> None:
    """create -> read -> retry -> delete along the document's links: every answer documented, no 5xx."""
    stateful, scenarios = WALKS[walk]
    consent_pages: list[str] = []

    class Walk(stateful.as_state_machine()):  # type: ignore[misc]
        def before_call(self, case: Case) -> None:
            # The platform's consent dialog, approved as a person would: its redirect's code and state
            # are what the dashboard's callback page posts (the link carries the state alone).
            if case.operation.label == CONNECT_CALLBACK and consent_pages:
                redirect = decide(consent_pages.pop())
                if redirect.status_code in (301, 302, 303):
                    query = dict(httpx.URL(redirect.headers["location"]).params)
                    case.body = {"state": query.get("state", ""), "code": query.get("code")}

        def get_call_kwargs(self, case: Case) -> dict[str, Any]:
            headers = credentials(case, fuzz_org, api_key)
            if case.operation.label == SITE_EVENTS:
                headers["Origin"] = shop_page_origin(base_url, fuzz_org)
            return {"base_url": base_url, "headers": headers}

        def after_call(self, response: Response, case: Case) -> None:
            super().after_call(response, case)
            if case.operation.label == CONNECT and response.status_code == 200:
                consent_pages.append(response.json()["authorizationUrl"])
            answered(case, response.status_code, response.text, stack, fuzz_org)

        def validate_response(
            self, response: Response, case: Case, additional_checks: Any = None, **kwargs: Any
        ) -> None:
            case.validate_response(
                response, checks=STATEFUL_CHECKS, transport_kwargs=kwargs or None, recorder=self.recorder
            )

    Walk.run(
        settings=settings(
            max_examples=scenarios,
            stateful_step_count=STATEFUL_STEPS,
            derandomize=True,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
    )


def test_every_operation_was_answered_2xx_at_least_once() -> None:
    """Over the phases above (run first, in this module's order), each operation reached its core."""
    assert ANSWERED, "run with the fuzzing tests above"
    never = {
        label: {status: SAID[label, status] for status in sorted(set(statuses))}
        for label, statuses in sorted(ANSWERED.items())
        if not any(200 <= status < 300 for status in statuses) and label not in NO_SUCCESS_WITHOUT
    }
    assert not never, f"operations never answered 2xx (what they answered): {never}"
    # And every operation of the document was called
    assert set(ANSWERED) >= {result.ok().label for result in with_credentials.get_all_operations()}
