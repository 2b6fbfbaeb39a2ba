"""Fuzzing every route of the committed ``openapi.json`` with schemathesis, through the local gateway.

Each operation gets generated requests, valid and invalid (schemathesis' examples, coverage and
fuzzing phases: boundary values, missing and extra fields, wrong types, undeclared content types,
random data), sent with valid credentials: the dashboard JWT or an API key of an organization made
for the fuzzer as a merchant sets one up (a connected ad account, trained models, its shop's files
sent through the presigned links and synced, a payments account onboarded on the provider's page),
and the provider's signature on webhook deliveries. Every answer must be no 5xx, a
status the document lists for the operation, the documented content type, headers and body, and
authentication enforced. The same operations are fuzzed without credentials (and with the empty
ones schemathesis makes up): every answer must be 401.

Then a stateful phase walks the document's links (``scripts/openapi.py``, ``LINKS``) with
schemathesis' state machine: create -> read -> retry with the same Idempotency-Key -> delete, each step
with the ids the service answered, so cases reach the core instead of "no such audience". Every
operation must have been answered its success (a 2xx, or the checkout form's 303) at least once over
the whole run: what a generated walk seldom builds (an active segment audience with a holdout, a failed
activation, a product's checkout page) the merchant's path builds last, each call a case of the document
checked as the others (``NO_SUCCESS_WITHOUT`` would list what no request reaches, and why: none).
Where a step needs what only a person, a browser or the platform can do (the OAuth consent dialog,
the provider's onboarding page, sending a file to an upload link), the test does it as they would; a
disconnect is followed by connecting again, so later cases still reach the connected paths. The
account's closure is walked last, by a second organization, so that its success ends no organization
the run uses.

Bounded and reproducible: a fixed seed and derandomized Hypothesis, so every run sends the same
cases; loopback only. A finding is fixed in the service, or in the schema's source
(``scripts/openapi.py``, the request models' documented rules) when the document, not the service,
is wrong.
"""

from __future__ import annotations

import ipaddress
import json
from collections import defaultdict
from collections.abc import Iterator
from functools import partial
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
import requests
import schemathesis
import stripe
from hypothesis import HealthCheck, Phase, settings
from hypothesis.errors import Flaky
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
from local.payments_browser import connect_payments, onboard
from local.platform_browser import decide
from local.seed import PURCHASE_MODEL, seed_models
from local.stack import LocalStack
from local.template import ROOT
from local.uploads import send_upload
from tests.integration.test_activation_pipeline import users, wait_until
from tests.integration.test_audience_sync import wait_for_last_run
from tests.integration.test_audiences import created_in_full
from tests.integration.test_data_source import shop_files, upload_shop, wait_for_sync
from tests.integration.test_publishing import advert

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
SHOP_SCENARIOS = 10
SITE_SCENARIOS = 8
CLOSURE_SCENARIOS = 3
STATEFUL_STEPS = 8
# Operations no request of the run gets a success from yet, and why (every other must get one): none.
# What a generated walk seldom reaches, the merchant's path below reaches every run.
NO_SUCCESS_WITHOUT: dict[str, str] = {}
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
# API Gateway's integration timeout: no answer takes longer.
GATEWAY_TIMEOUT_SECONDS = 30
# The answer API Gateway gives, before any function runs, to a method or path it has no route for.
GATEWAY_NOT_FOUND = {"message": "Not Found"}


def fuzz_settings(max_examples: int) -> settings:
    """Hypothesis settings for one fuzzed operation, or the scenarios of a walk: derandomized, so every
    run draws the same cases."""
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


# The fuzzer's shop: its three files, sent through the presigned links as the dashboard sends them.
SHOP_USERS = 300
SHOP_FILES = shop_files(n_users=SHOP_USERS, seed=SEED % 1000)
# A large audience list (``POST /platform-ads/uploads``), as the dashboard sends a CSV the merchant chose.
AUDIENCE_LIST = b"user_id,email,firstName,lastName,phone,score,country\n" + b"".join(
    f"c{i},shopper{i}@example.com,Ana,Silva,07700 9{i:05d},0.8,GB\n".encode() for i in range(40)
)


@pytest.fixture(scope="module")
def fuzz_org(stack: LocalStack) -> ConnectedOrg:
    """An organization of the fuzzer's own, set up as a merchant sets one up, so cases reach past "not
    connected", "no such model", "nothing synced" and "no payments account", and nothing another test
    uses is touched: connected to the sandbox's ad account, with trained models, a declared site, its
    shop's files uploaded through the presigned links and synced once (which trains both shop models),
    and a payments account connected through the provider's onboarding page."""
    with httpx.Client(base_url=stack.api_url, timeout=30) as api:
        org = connected_org(stack, api)
    seed_models(org.org_id, n_users=300)
    with httpx.Client(base_url=stack.api_url, timeout=60, headers=org.headers) as api:
        # A declared site, so that issuing its key (which needs a domain) can succeed
        declared = api.post("/platform-ads/events/site", json={"domains": ["shop.example.com"]})
        assert declared.status_code == 200, declared.text
        started = api.post(
            "/platform-ads/data-source/sync", json={"uploadId": upload_shop(api, org, SHOP_FILES)}
        )
        assert started.status_code == 202, started.text
        synced = wait_for_sync(api, org, started.json()["syncId"], trained=True)
        assert synced["current"]["training"]["purchase"]["state"] == "succeeded", synced
    connected = connect_payments(stack.api_url, org.headers["Authorization"], business_name="Fuzz Shop")
    assert connected.status_code == 200, connected.text
    assert connected.json()["checkoutAvailable"] is True, connected.text
    return org


@pytest.fixture(scope="module")
def closing_org(stack: LocalStack) -> ConnectedOrg:
    """A second organization, connected, whose closure the last walk carries out (its success deletes
    the organization, which must not be the one the other phases use)."""
    with httpx.Client(base_url=stack.api_url, timeout=30) as api:
        return connected_org(stack, api)


@pytest.fixture(scope="module")
def api_key(stack: LocalStack, fuzz_org: ConnectedOrg) -> str:
    with httpx.Client(base_url=stack.api_url, timeout=30) as api:
        created = api.post("/dashboard/api-keys", json={"label": "fuzz"}, headers=fuzz_org.headers)
    assert created.status_code == 201, created.text
    key: str = created.json()["key"]
    return key


@pytest.fixture(scope="module")
def signing_secret(stack: LocalStack) -> str:
    """The secret the provider signs the webhook's deliveries with (the stack registered the endpoint)."""
    value = stack.client("secretsmanager").get_secret_value(SecretId=stack.physical["PaymentsSecrets"].ref)
    secret: str = json.loads(value["SecretString"])["webhook_secret"]
    return secret


def provider_signature(case: Case, secret: str) -> dict[str, str]:
    """``Stripe-Signature`` over the very bytes the case's body is sent as, signed now with the
    endpoint's secret, as the provider signs each delivery."""
    kwargs = case.as_transport_kwargs(base_url="http://127.0.0.1")
    sent = requests.Request(
        **{
            key: kwargs[key]
            for key in ("method", "url", "headers", "params", "json", "data")
            if key in kwargs
        }
    ).prepare()
    body = sent.body or b""
    payload = body.decode("utf-8", errors="replace") if isinstance(body, bytes) else str(body)
    return {"Stripe-Signature": stripe.WebhookSignature.generate_signature_header(payload, secret)}


def credentials(case: Case, org: ConnectedOrg, api_key: str, signing_secret: str) -> dict[str, str]:
    """The header the operation's security scheme asks for."""
    requirements = case.operation.definition.raw["security"]
    if not requirements:
        return {}  # a shopper's page: public
    (requirement,) = requirements
    if "paymentsSignature" in requirement:
        return provider_signature(case, signing_secret)
    if "apiKey" in requirement:
        return {"X-Service-Api-Key": api_key}
    return dict(org.headers)


# Each operation's statuses over the run (with credentials), for the last test, and one answer of
# each status (what it said), so a failure says why.
ANSWERED: defaultdict[str, list[int]] = defaultdict(list)
SAID: dict[tuple[str, int], str] = {}
DISCONNECT = "POST /platform-ads/disconnect"
CONNECT = "POST /platform-ads/connect"
CONNECT_CALLBACK = "POST /platform-ads/connect/callback"
PAYMENTS_DISCONNECT = "POST /payments/disconnect"
PAYMENTS_CONNECT = "POST /payments/connect"
PAYMENTS_CALLBACK = "POST /payments/connect/callback"
DATA_SOURCE_UPLOADS = "POST /platform-ads/data-source/uploads"
AUDIENCE_UPLOAD = "POST /platform-ads/uploads"
CLOSURE = "/platform-ads/account/closure"
# An operation whose success is a redirect, not a 2xx: the product page's form, 303 to the provider's
# payment page.
SUCCESS_REDIRECTS = {"POST /checkout/{orgId}/{productId}": 303}


def approved_connection(base_url: str, fuzz_org: ConnectedOrg) -> dict[str, Any] | None:
    """Start connecting, approve the sandbox's consent dialog as a person would, and return the body the
    dashboard's callback page then posts (the redirect's code and state)."""
    with httpx.Client(base_url=base_url, timeout=30, headers=fuzz_org.headers) as api:
        started = api.post("/platform-ads/connect")
    return consented(started.json()["authorizationUrl"])


def consented(authorization_url: str) -> dict[str, Any] | None:
    """Approve the platform's consent dialog as a person would: the body the dashboard's callback page
    then posts (the redirect's code and state)."""
    redirect = decide(authorization_url)
    if redirect.status_code not in (301, 302, 303):
        return None
    query = dict(httpx.URL(redirect.headers["location"]).params)
    return {"state": query.get("state", ""), "code": query.get("code")}


def onboarded(onboarding_url: str) -> dict[str, Any] | None:
    """Submit the payment provider's onboarding page as a person would: the body the dashboard's
    payments callback page then posts (the return's state)."""
    returned = onboard(onboarding_url, business_name="Fuzz Shop")
    if returned.status_code not in (302, 303):
        return None
    return {"state": dict(httpx.URL(returned.headers["location"]).params).get("state", "")}


def approved_onboarding(base_url: str, fuzz_org: ConnectedOrg) -> dict[str, Any] | None:
    with httpx.Client(base_url=base_url, timeout=30, headers=fuzz_org.headers) as api:
        started = api.post("/payments/connect")
    return onboarded(started.json()["onboardingUrl"]) if started.status_code == 200 else None


def sent_files(case: Case, response: Response) -> None:
    """What the dashboard does with an upload link it was given: send the file(s) to it, so the
    links' next step (a sync, an audience of the list) finds them."""
    if response.status_code != 201:
        return
    if case.operation.label == DATA_SOURCE_UPLOADS:
        for link in response.json()["files"]:
            assert send_upload(link, SHOP_FILES[link["kind"]]).status_code == 204
    if case.operation.label == AUDIENCE_UPLOAD:
        assert send_upload(response.json(), AUDIENCE_LIST).status_code == 204


def answered(case: Case, status: int, text: str, stack: LocalStack, fuzz_org: ConnectedOrg) -> None:
    """Record the answer; after a disconnect, connect the fuzzer's organization again (the platform,
    or the payments account)."""
    ANSWERED[case.operation.label].append(status)
    SAID.setdefault((case.operation.label, status), text[:200])
    if case.operation.label == DISCONNECT and status == 200:
        with httpx.Client(base_url=stack.api_url, timeout=30) as api:
            reconnect(stack, api, fuzz_org)
    if case.operation.label == PAYMENTS_DISCONNECT and status == 200:
        connected = connect_payments(
            stack.api_url, fuzz_org.headers["Authorization"], business_name="Fuzz Shop"
        )
        assert connected.status_code == 200, connected.text


def succeeded(label: str, statuses: list[int]) -> bool:
    """Whether one of the operation's answers was its success: a 2xx, or the redirect it documents."""
    return any(200 <= status < 300 or status == SUCCESS_REDIRECTS.get(label) for status in statuses)


@with_credentials.parametrize()
@fuzz_settings(EXAMPLES_WITH_CREDENTIALS)
def test_every_answer_with_credentials_is_documented_and_no_5xx(
    case: Case, base_url: str, stack: LocalStack, fuzz_org: ConnectedOrg, api_key: str, signing_secret: str
) -> None:
    # Once, what the dashboard's callback pages post after the person approved the platform's consent
    # dialog or submitted the payment provider's onboarding page
    if case.operation.label == CONNECT_CALLBACK and not succeeded(
        CONNECT_CALLBACK, ANSWERED[CONNECT_CALLBACK]
    ):
        case.body = approved_connection(base_url, fuzz_org) or case.body
    if case.operation.label == PAYMENTS_CALLBACK and not succeeded(
        PAYMENTS_CALLBACK, ANSWERED[PAYMENTS_CALLBACK]
    ):
        case.body = approved_onboarding(base_url, fuzz_org) or case.body
    response = case.call_and_validate(
        base_url=base_url, headers=credentials(case, fuzz_org, api_key, signing_secret), checks=CHECKS
    )
    answered(case, response.status_code, response.text, stack, fuzz_org)
    sent_files(case, response)


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


def without_closure(schema: schemathesis.schemas.BaseSchema) -> schemathesis.schemas.BaseSchema:
    """The walk of the fuzzer's organization never closes it (the closure's link types its name)."""
    return schema.exclude(method="POST", path=CLOSURE)


# The walks, in this order: every operation of the document; the audiences' family alone (its create
# is one root among fifty in the first, and most of the document's links start there), from the
# targeting preview whose segment it activates; the synced shop's (upload -> sync, products ->
# preview, products -> checkout routes -> the checkout page); the site's (declare -> issue its key ->
# send a page's events with it); and last, the account's closure, by a
# second organization (GET the account -> close it with its name -> its progress).
WALKS: dict[str, tuple[schemathesis.schemas.BaseSchema, int, str]] = {
    "all": (without_closure(stateful_schema()), STATEFUL_SCENARIOS, "fuzz_org"),
    "audiences": (
        stateful_schema(
            path_regex="^/platform-ads/(audiences|activations|uploads|data-source/products|targeting)"
        ),
        AUDIENCE_SCENARIOS,
        "fuzz_org",
    ),
    "shop": (
        stateful_schema(
            path_regex="^/(platform-ads/(data-source|targeting|checkout-routes)|checkout/|dashboard/models)"
        ),
        SHOP_SCENARIOS,
        "fuzz_org",
    ),
    "site": (
        stateful_schema(path_regex="^/(platform-ads/events/site|site-events)"),
        SITE_SCENARIOS,
        "fuzz_org",
    ),
    "closure": (stateful_schema(path_regex=f"^{CLOSURE}$"), CLOSURE_SCENARIOS, "closing_org"),
}
# ignored_auth is left to the phases above (it re-sends every success without credentials).
STATEFUL_CHECKS = [check for check in CHECKS if check is not ignored_auth]


@pytest.mark.parametrize("walk", list(WALKS))
def test_linked_walks_are_documented_and_no_5xx(
    walk: str,
    request: pytest.FixtureRequest,
    base_url: str,
    stack: LocalStack,
    fuzz_org: ConnectedOrg,
    api_key: str,
    signing_secret: str,
) -> None:
    """create -> read -> retry -> delete along the document's links: every answer documented, no 5xx."""
    stateful, scenarios, caller = WALKS[walk]
    org: ConnectedOrg = request.getfixturevalue(caller)
    consent_pages: list[str] = []
    onboarding_pages: list[str] = []
    findings: list[Exception] = []

    class Walk(stateful.as_state_machine()):  # type: ignore[misc]
        def before_call(self, case: Case) -> None:
            # The platform's consent dialog approved, or the provider's onboarding page submitted, as a
            # person would: what the dashboard's callback page posts (the link carries the state alone).
            if case.operation.label == CONNECT_CALLBACK and consent_pages:
                case.body = consented(consent_pages.pop()) or case.body
            if case.operation.label == PAYMENTS_CALLBACK and onboarding_pages:
                case.body = onboarded(onboarding_pages.pop()) or case.body

        def get_call_kwargs(self, case: Case) -> dict[str, Any]:
            headers = credentials(case, org, api_key, signing_secret)
            if case.operation.label == SITE_EVENTS:
                headers["Origin"] = shop_page_origin(base_url, org)
            # API Gateway's own limit: the local stack at load 20+ can take longer than requests' 10 s
            return {"base_url": base_url, "headers": headers, "timeout": GATEWAY_TIMEOUT_SECONDS}

        def after_call(self, response: Response, case: Case) -> None:
            super().after_call(response, case)
            if case.operation.label == CONNECT and response.status_code == 200:
                consent_pages.append(response.json()["authorizationUrl"])
            if case.operation.label == PAYMENTS_CONNECT and response.status_code == 200:
                onboarding_pages.append(response.json()["onboardingUrl"])
            sent_files(case, response)
            answered(case, response.status_code, response.text, stack, org)

        def validate_response(
            self, response: Response, case: Case, additional_checks: Any = None, **kwargs: Any
        ) -> None:
            try:
                case.validate_response(
                    response, checks=STATEFUL_CHECKS, transport_kwargs=kwargs or None, recorder=self.recorder
                )
            except Exception as failed:
                findings.append(failed)
                raise

    try:
        Walk.run(
            settings=settings(
                fuzz_settings(scenarios),
                # No shrinking: a walk's steps depend on the stack's state, which a replay cannot
                # restore (Hypothesis would report its own FlakyStrategyDefinition, not what failed)
                phases=[Phase.generate],
                stateful_step_count=STATEFUL_STEPS,
            )
        )
    except Flaky:
        # As schemathesis' own stateful engine does: the rules a step may take depend on what the
        # stack answered before, so Hypothesis may find a scenario drawing differently from an earlier
        # one with the same start; that is no finding. What a check found is.
        if findings:
            raise findings[0] from None


# The merchant's path to the routes a generated walk may miss (their success needs a state a walk
# seldom builds: an active audience of a scored segment with a holdout, a failed activation, a key the
# walk created, a product's checkout page), each call a case of the document checked as above.
REACH_SEGMENT = {"modelName": PURCHASE_MODEL, "productId": "p00001", "rule": "top_percent", "value": 100}
# The platform's refusal that fails an activation until the terms are accepted (the sandbox's fault).
TERMS_NOT_ACCEPTED = {
    "kind": "error",
    "method": "POST",
    "path": "/customaudiences$",
    "code": 200,
    "subcode": 1870090,
}


def reach(
    base_url: str,
    headers: dict[str, str],
    method: str,
    path: str,
    *,
    success: int | tuple[int, ...],
    path_parameters: dict[str, str] | None = None,
    **parts: Any,
) -> Response:
    """One call of ``method path`` as a case of the document (``parts``: its body, query, media type),
    checked as the fuzzed cases are and recorded; its answer must be ``success``."""
    case = with_credentials[path][method].Case(path_parameters=path_parameters or {}, **parts)
    response = case.call_and_validate(
        base_url=base_url,
        headers=headers,
        checks=CHECKS,
        timeout=GATEWAY_TIMEOUT_SECONDS,
        allow_redirects=False,
    )
    ANSWERED[case.operation.label].append(response.status_code)
    SAID.setdefault((case.operation.label, response.status_code), response.text[:200])
    assert response.status_code in (success if isinstance(success, tuple) else (success,)), response.text
    return response


def test_the_routes_a_walk_may_miss_answer_their_success_on_the_merchants_path(
    base_url: str, stack: LocalStack, fuzz_org: ConnectedOrg, sandbox: httpx.Client
) -> None:
    """Run after the walks: an active segment audience with a holdout (its schedule, refresh, lift,
    ads-manager link, advert published and deleted, the audience deleted), a created key revoked, a
    product's checkout page and form, a refused activation retried, the shop's files synced; each
    answered its success."""
    org, call = fuzz_org, partial(reach, base_url, dict(fuzz_org.headers))
    with httpx.Client(base_url=base_url, timeout=GATEWAY_TIMEOUT_SECONDS, headers=org.headers) as api:
        # An audience of the synced shop's scored segment with a holdout, active
        created = api.post(
            "/platform-ads/audiences",
            json={"name": "Reach", "segment": REACH_SEGMENT, "holdoutPercent": 50, "holdoutSeed": 15},
        )
        audience = created_in_full(api, org, created)["audienceId"]
        at = {"audienceId": audience}
        # Kept to a weekly schedule, refreshed now (a run of the sync), read once that run ended
        call(
            "POST",
            "/platform-ads/audiences/{audienceId}/sync",
            success=200,
            path_parameters=at,
            body={"frequency": "weekly"},
        )
        call("POST", "/platform-ads/audiences/{audienceId}/refresh", success=(200, 202), path_parameters=at)
        wait_for_last_run(api, org, audience, None)
        call("GET", "/platform-ads/audiences/{audienceId}/lift", success=200, path_parameters=at)
        call("GET", "/platform-ads/audiences/{audienceId}/ads-manager-link", success=200, path_parameters=at)
        call(
            "POST",
            "/platform-ads/audiences/{audienceId}/advert",
            success=201,
            path_parameters=at,
            body=advert(),
        )
        call(
            "DELETE",
            "/platform-ads/audiences/{audienceId}/advert",
            success=204,
            path_parameters=at,
            query={"confirm": "true"},
        )
        call(
            "DELETE",
            "/platform-ads/audiences/{audienceId}",
            success=204,
            path_parameters=at,
            query={"confirm": "true"},
        )
        # A key the merchant created, revoked
        key = api.post("/dashboard/api-keys", json={"label": "reach"}).json()["keyId"]
        call("DELETE", "/dashboard/api-keys/{keyId}", success=200, path_parameters={"keyId": key})
        # A product's hosted checkout page, and its form (a 303 to the provider's payment page)
        route = api.get("/platform-ads/checkout-routes", params={"productId": REACH_SEGMENT["productId"]})
        assert route.status_code == 200, route.text
        page = {"orgId": org.org_id, "productId": REACH_SEGMENT["productId"]}
        call("GET", "/checkout/{orgId}/{productId}", success=200, path_parameters=page)
        call(
            "POST",
            "/checkout/{orgId}/{productId}",
            success=303,
            path_parameters=page,
            body={"quantity": "1"},
            media_type="application/x-www-form-urlencoded",
        )
        # An activation the platform refused (terms not accepted), retried once the terms are accepted
        sandbox.post("/faults", json=TERMS_NOT_ACCEPTED)
        try:
            refused = api.post(
                "/platform-ads/activations",
                json={"name": "Terms later", "users": users(20, "reach")},
                headers={"Idempotency-Key": f"reach-{org.org_id}"},
            )
            assert refused.status_code == 202, refused.text
            failed = refused.json()["audienceId"]
            wait_until(api, org, failed, "failed", "succeeded")
        finally:
            sandbox.delete("/faults")
        call(
            "POST",
            "/platform-ads/activations/{audienceId}/retry",
            success=202,
            path_parameters={"audienceId": failed},
        )
        # The shop's files synced again as the wizard syncs them (a walk's upload may ask for another
        # format than its sync names, or its sync meet a training the walk started), once the trainings
        # the walks started have ended; then trained, so the state it leaves is settled
        latest = api.get("/platform-ads/data-source").json()["syncs"][0]["syncId"]
        wait_for_sync(api, org, latest, trained=True)
        synced = call(
            "POST",
            "/platform-ads/data-source/sync",
            success=202,
            body={"uploadId": upload_shop(api, org, SHOP_FILES)},
        )
        wait_for_sync(api, org, synced.json()["syncId"], trained=True)


def test_every_operation_was_answered_2xx_at_least_once() -> None:
    """Over the phases above (run first, in this module's order), each operation reached its core: a 2xx,
    or the redirect that is its success."""
    assert ANSWERED, "run with the fuzzing tests above"
    never = {
        label: {status: SAID[label, status] for status in sorted(set(statuses))}
        for label, statuses in sorted(ANSWERED.items())
        if not succeeded(label, statuses) and label not in NO_SUCCESS_WITHOUT
    }
    assert not never, f"operations never answered 2xx (what they answered): {never}"
    # And every operation of the document was called
    assert set(ANSWERED) >= {result.ok().label for result in with_credentials.get_all_operations()}
