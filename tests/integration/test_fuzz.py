"""Fuzzing every route of the committed ``openapi.json`` with schemathesis, through the local gateway.

Each operation gets generated requests, valid and invalid (schemathesis' examples, coverage and
fuzzing phases: boundary values, missing and extra fields, wrong types, undeclared content types,
random data), sent with valid credentials: the dashboard JWT or an API key of an organization made
for the fuzzer, with a connected ad account and trained models. Every answer must be no 5xx, a
status the document lists for the operation, the documented content type, headers and body, and
authentication enforced. The same operations are fuzzed without credentials (and with the empty
ones schemathesis makes up): every answer must be 401.

Bounded and reproducible: a fixed seed and derandomized Hypothesis, so every run sends the same
cases; loopback only. A finding is fixed in the service, or in the schema's source
(``scripts/openapi.py``) when the document, not the service, is wrong.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.generation.case import Case
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    ignored_auth,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from local.connected import ConnectedOrg, connected_org
from local.seed import PURCHASE_MODEL, seed_models
from local.stack import LocalStack
from local.template import ROOT

pytestmark = pytest.mark.integration

OPENAPI = ROOT / "openapi.json"
SEED = 20261123
# Random cases per operation in the fuzzing phase, on top of the examples and coverage phases.
EXAMPLES_WITH_CREDENTIALS = 10
EXAMPLES_WITHOUT_CREDENTIALS = 5
# What the service promises: no 5xx, a documented status, content type, headers and body, and
# authentication enforced. Left out: positive_data_acceptance and negative_data_rejection (the schema
# cannot express cross-field rules such as "users, an uploadId or a segment", so a 400 for
# schema-valid data can be right, and lenient parsing such as a date given as 0 is not a defect),
# and unsupported_method (a method without a route is answered by API Gateway itself, 404
# {"message": "Not Found"}, which the service cannot change).
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


@with_credentials.parametrize()
@fuzz_settings(EXAMPLES_WITH_CREDENTIALS)
def test_every_answer_with_credentials_is_documented_and_no_5xx(
    case: Case, base_url: str, fuzz_org: ConnectedOrg, api_key: str
) -> None:
    case.call_and_validate(base_url=base_url, headers=credentials(case, fuzz_org, api_key), checks=CHECKS)


@without_credentials.parametrize()
@fuzz_settings(EXAMPLES_WITHOUT_CREDENTIALS)
def test_every_answer_without_credentials_is_401(case: Case, base_url: str) -> None:
    response = case.call_and_validate(base_url=base_url, checks=CHECKS)
    if not case.operation.definition.raw["security"]:
        return  # a shopper's page needs no credentials: the checks above are what it owes
    if response.status_code == 404 and response.json() == GATEWAY_NOT_FOUND:
        return  # API Gateway has no route for this path (say an empty path parameter): nothing ran
    assert response.status_code == 401, response.text
