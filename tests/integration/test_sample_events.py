"""Every sample event in ``events/`` runs through its function's handler against the local stack.

The samples are what a developer passes to ``sam local invoke -e`` (or to ``/_local/invoke``), so each
must still be an event its handler answers well: an HTTP event gets the success status its route
documents in ``openapi.json`` with a body matching the documented schema; a direct invocation gets
its result. Samples carry placeholders (a token to paste, an audience id); the test puts real values
in their place, after setting up the state an event needs (a connected organization, an audience, a
key to revoke, an authorization code), and changes nothing else.
"""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, parse_qsl, urlsplit

import httpx
import pytest
from jsonschema import Draft202012Validator

from local.connected import ConnectedOrg
from local.platform_browser import decide
from local.seed import DemoCredentials, create_user, sign_in
from local.stack import LocalStack
from local.template import ROOT, functions, load_template, routes
from shared import wiring
from shared.activation.steps import Worker
from shared.audiences.models import CreateAudienceRequest
from shared.datasources.models import SyncRequest
from shared.ml.datasets import dump_records
from tools.synthetic import SyntheticConfig, generate_shop

EVENTS = sorted((ROOT / "events").glob("*.json"))
TEMPLATE = load_template()
FUNCTION_OF_EVENT = {spec.code_dir.name: logical_id for logical_id, spec in functions(TEMPLATE).items()}
ROUTES_OF = {
    function: {f"{r.method} {r.path}" for r in routes(TEMPLATE) if r.function == function}
    for function in FUNCTION_OF_EVENT.values()
}
OPENAPI = json.loads((ROOT / "openapi.json").read_text())

# Placeholders the samples use for things only a running stack has.
SAMPLE_AUDIENCE_ID = "0b6f1c9e-2a43-4a7e-9d1f-5e0c2b7a8d34"
SAMPLE_ORG_ID = "demo-shop"
SAMPLE_KEY_ID = "replace0me"
SAMPLE_CODE = "AQD-example-code"
SAMPLE_STATE = "nonce.1795312799.signature"
SAMPLE_SYNC_ID = "20261122T000000Z-0a1b2c3d"
SAMPLE_ORG_NAME = "Demo Shop"
SAMPLE_USER_ID = "0c7e5a4e-1f2d-4b8a-9e3c-5d6f7a8b9c0d"
SAMPLE_CLOSURE_ID = "7d1e2f3a-4b5c-4d6e-8f90-a1b2c3d4e5f6"
SAMPLE_RUN_ID = "schedule-20261123T060000"
SAMPLE_PRODUCT_ID = "p00004"  # the demo shop's sample product (make dev's banner)


def sample(path: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(path.read_text())
    return loaded


def sample_body(name: str) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(sample(ROOT / "events" / f"{name}.json")["body"])
    return body


@dataclass
class Setting:
    """Real values for a sample's placeholders (replaced wherever they occur in the event)."""

    replacements: dict[str, str] = field(default_factory=dict)

    def apply(self, event: dict[str, Any]) -> dict[str, Any]:
        text = json.dumps(event)
        for placeholder, value in self.replacements.items():
            assert placeholder in text, f"the sample no longer contains {placeholder!r}"
            text = text.replace(placeholder, value)
        applied: dict[str, Any] = json.loads(text)
        return applied


@dataclass
class SampleContext:
    """What the set-up of one sample may use."""

    stack: LocalStack
    api: httpx.Client
    demo: DemoCredentials
    org: ConnectedOrg

    def credentials(self, event: dict[str, Any]) -> dict[str, str]:
        """The sample's placeholder credentials, mapped to the connected organization's user and to
        the demo organization's API key (the one with trained models)."""
        headers = event.get("headers", {})
        found = {}
        if "authorization" in headers:
            found[headers["authorization"]] = self.org.headers["Authorization"]
        if "x-service-api-key" in headers:
            found[headers["x-service-api-key"]] = self.demo.api_key
        return found

    def audience(self) -> str:
        """An active audience of the organization, created from the create_audience sample's users."""
        body = {**sample_body("create_audience"), "name": f"sample {uuid.uuid4().hex[:6]}"}
        created = self.api.post("/platform-ads/audiences", json=body, headers=self.org.headers)
        assert created.status_code == 201, created.text
        audience_id: str = created.json()["audienceId"]
        return audience_id


def no_setting(_: SampleContext, event: dict[str, Any]) -> Setting:
    return Setting()


def with_an_audience(env: SampleContext, event: dict[str, Any]) -> Setting:
    return Setting({SAMPLE_AUDIENCE_ID: env.audience()})


def with_an_advert(env: SampleContext, event: dict[str, Any]) -> Setting:
    """An active audience with a published (paused) advert, from the publish_advert sample's body."""
    audience_id = env.audience()
    body = {**sample_body("publish_advert"), "dryRun": False}
    published = env.api.post(
        f"/platform-ads/audiences/{audience_id}/advert", json=body, headers=env.org.headers
    )
    assert published.status_code == 201, published.text
    return Setting({SAMPLE_AUDIENCE_ID: audience_id})


def with_a_key_to_revoke(env: SampleContext, event: dict[str, Any]) -> Setting:
    created = env.api.post("/dashboard/api-keys", json={"label": "to revoke"}, headers=env.org.headers)
    assert created.status_code == 201, created.text
    return Setting({SAMPLE_KEY_ID: created.json()["keyId"]})


def with_an_accepted_activation(env: SampleContext, event: dict[str, Any]) -> Setting:
    # Accepted as POST /platform-ads/activations does, but with no execution started, so this step
    # is the one that does the work.
    request = CreateAudienceRequest.model_validate_json(sample(ROOT / "events/start_activation.json")["body"])
    accepted = wiring.audience_service().start_activation(env.org.org_id, request, None, NoExecutions())
    return Setting({SAMPLE_ORG_ID: env.org.org_id, SAMPLE_AUDIENCE_ID: accepted.audience_id})


def with_a_failed_activation(env: SampleContext, event: dict[str, Any]) -> Setting:
    # Accepted without an execution, then failed as RecordFailure records a crash, so it can be retried.
    request = CreateAudienceRequest.model_validate_json(sample(ROOT / "events/start_activation.json")["body"])
    service = wiring.audience_service()
    accepted = service.start_activation(env.org.org_id, request, None, NoExecutions())
    worker = Worker(owner=f"{accepted.audience_id}-1", seconds_left=lambda: 300.0)
    cause = json.dumps({"errorType": "Runtime.ExitError", "errorMessage": "Runtime exited"})
    service.pipeline.record_failure(env.org.org_id, accepted.audience_id, worker, "Runtime.ExitError", cause)
    return Setting({SAMPLE_AUDIENCE_ID: accepted.audience_id})


class NoExecutions:
    """An execution starter that starts nothing: the sample's step does the work itself."""

    def __call__(self, name: str, payload: dict[str, str]) -> None:
        return None

    def running(self, name: str) -> bool:
        return False


def with_shop_files(env: SampleContext, event: dict[str, Any]) -> Setting:
    shop = generate_shop(SyntheticConfig(n_users=300, n_products=40, seed=3))
    setting = Setting({SAMPLE_ORG_ID: env.org.org_id})
    keys = setting.apply(event)
    wiring.data_blobs().put(keys["orders_key"], dump_records(shop.data.orders, "csv"))
    wiring.data_blobs().put(keys["customers_key"], dump_records(shop.data.customers, "csv"))
    return setting


def _put_shop_files(keys: dict[str, str]) -> None:
    shop = generate_shop(SyntheticConfig(n_users=300, n_products=40, seed=3))
    wiring.data_blobs().put(keys["customers"], dump_records(shop.data.customers, "csv"))
    wiring.data_blobs().put(keys["products"], dump_records(shop.data.products, "csv"))
    wiring.data_blobs().put(keys["orders"], dump_records(shop.data.orders, "csv"))


def with_files_to_sync(env: SampleContext, event: dict[str, Any]) -> Setting:
    setting = Setting({SAMPLE_ORG_ID: env.org.org_id})
    _put_shop_files(json.loads(setting.apply(event)["body"])["files"])
    return setting


def with_a_sync_to_run(env: SampleContext, event: dict[str, Any]) -> Setting:
    # Accepted as POST /platform-ads/data-source/sync does, with no execution started, so this step
    # is the one that validates and stores.
    request = SyncRequest.model_validate_json(sample(ROOT / "events/sync_data_source.json")["body"])
    files = {kind: key.replace(SAMPLE_ORG_ID, env.org.org_id) for kind, key in (request.files or {}).items()}
    _put_shop_files(files)
    request = request.model_copy(update={"files": files})
    started = wiring.data_source_service().start_sync(env.org.org_id, request, lambda *_: None)
    return Setting({SAMPLE_ORG_ID: env.org.org_id, SAMPLE_SYNC_ID: started.sync_id})


def with_a_synced_version(env: SampleContext, event: dict[str, Any]) -> Setting:
    # Validated and stored as the sync step does, with no execution started, so this step is the one
    # that sends the version's purchases.
    setting = with_a_sync_to_run(env, event)
    synced = wiring.data_source_sync().run_sync(env.org.org_id, setting.replacements[SAMPLE_SYNC_ID])
    assert synced.dataset_version is not None
    return Setting({SAMPLE_ORG_ID: env.org.org_id, SAMPLE_SYNC_ID: synced.dataset_version})


def with_a_trained_data_source(env: SampleContext, event: dict[str, Any]) -> Setting:
    """The organization's shop synced through the API and both models trained (as the wizard does)."""
    from tests.integration.test_wizard import synced_and_trained

    synced_and_trained(env.api, env.org)
    return Setting()


def with_a_segment_audience(env: SampleContext, event: dict[str, Any]) -> Setting:
    """An active audience made from a segment of the trained shop, with the default 10 % holdout."""
    from tests.integration.test_wizard import SEGMENT, synced_and_trained

    synced_and_trained(env.api, env.org)
    body = {"name": f"lift {uuid.uuid4().hex[:6]}", "segment": {**SEGMENT, "rule": "top_n", "value": 200}}
    created = env.api.post("/platform-ads/audiences", json=body, headers=env.org.headers)
    assert created.status_code == 201, created.text
    return Setting({SAMPLE_AUDIENCE_ID: created.json()["audienceId"]})


def with_a_sync_to_step(env: SampleContext, event: dict[str, Any]) -> Setting:
    # A segment audience's sync started as refresh now does, with no execution started, so this step
    # is the one that scores and replaces.
    setting = with_a_segment_audience(env, event)
    audience_id = setting.replacements[SAMPLE_AUDIENCE_ID]
    syncs = dataclasses.replace(wiring.audience_sync_steps(), start=lambda *_: None)
    run = syncs.sync_now(env.org.org_id, audience_id).sync
    assert run is not None
    assert run.current is not None
    return Setting(
        {SAMPLE_ORG_ID: env.org.org_id, SAMPLE_AUDIENCE_ID: audience_id, SAMPLE_RUN_ID: run.current.run_id}
    )


def with_an_authorization_code(env: SampleContext, event: dict[str, Any]) -> Setting:
    """A user starts connecting and approves in the platform's dialog; the platform's redirect
    carries the code and state the callback event's body needs, and the event's caller is that user."""
    org_id = f"org-{uuid.uuid4().hex[:8]}"
    _, password = create_user(env.stack, org_id, f"{org_id}@example.com")
    authorization = f"Bearer {sign_in(env.stack, f'{org_id}@example.com', password)}"
    url = env.api.post("/platform-ads/connect", headers={"Authorization": authorization}).json()
    redirect = decide(url["authorizationUrl"], "approve")
    assert redirect.status_code == 302, redirect.text
    query = {k: v[0] for k, v in parse_qs(urlsplit(redirect.headers["location"]).query).items()}
    replacements = {SAMPLE_CODE: query["code"], SAMPLE_STATE: query["state"]}
    if "authorization" in event.get("headers", {}):
        replacements[event["headers"]["authorization"]] = authorization
    return Setting(replacements)


def with_a_payments_return(env: SampleContext, event: dict[str, Any]) -> Setting:
    """The organization's user starts connecting payments and completes the provider's page; its
    redirect to the dashboard carries the state the callback event's body needs."""
    from local.payments_browser import onboard

    started = env.api.post("/payments/connect", headers=env.org.headers)
    assert started.status_code == 200, started.text
    redirect = onboard(started.json()["onboardingUrl"])
    assert redirect.status_code == 303, redirect.text
    return Setting({SAMPLE_STATE: dict(parse_qsl(urlsplit(redirect.headers["location"]).query))["state"]})


def with_payments_connected(env: SampleContext, event: dict[str, Any]) -> Setting:
    from local.payments_browser import connect_payments

    connected = connect_payments(env.stack.api_url, env.org.headers["Authorization"])
    assert connected.status_code == 200, connected.text
    return Setting()


def with_a_shop_taking_payments(env: SampleContext, event: dict[str, Any]) -> Setting:
    """An organization with its payments account connected and its products synced: the sample's
    organization and product are its own, and its mug is on sale."""
    from tests.integration.payments_shop import shop_taking_payments

    shop = shop_taking_payments(env.stack)
    return Setting({SAMPLE_ORG_ID: shop.org.org_id, SAMPLE_PRODUCT_ID: "p-mug"})


def with_a_signed_delivery(env: SampleContext, event: dict[str, Any]) -> Setting:
    """The sample's body signed now with the webhook endpoint's secret, as the provider signs it."""
    import stripe

    secret = json.loads(
        env.stack.client("secretsmanager").get_secret_value(
            SecretId=env.stack.physical["PaymentsSecrets"].ref
        )["SecretString"]
    )["webhook_secret"]
    header = stripe.WebhookSignature.generate_signature_header(event["body"], secret)
    return Setting({event["headers"]["stripe-signature"]: header})


def with_the_organizations_name(env: SampleContext, event: dict[str, Any]) -> Setting:
    """The connected organization's name, typed to confirm its closure."""
    name = wiring.organization_store().name_of(env.org.org_id)
    assert name is not None
    return Setting({SAMPLE_ORG_NAME: name})


def with_an_accepted_closure(env: SampleContext, event: dict[str, Any]) -> Setting:
    # Accepted as POST /platform-ads/account/closure does, with no execution started, so this step
    # is the one that deletes.
    from jwt import decode

    from shared.closure.service import CloseAccountRequest

    user_id = str(
        decode(env.org.headers["Authorization"].split()[1], options={"verify_signature": False})["sub"]
    )
    name = wiring.organization_store().name_of(env.org.org_id)
    assert name is not None
    wiring.closure_service().start(
        user_id, env.org.org_id, CloseAccountRequest(confirm_name=name), lambda *_: None
    )
    record = wiring.closure_store().get(user_id)
    assert record is not None
    return Setting({SAMPLE_USER_ID: user_id, SAMPLE_CLOSURE_ID: record.closure_id})


def with_a_site_key(env: SampleContext, event: dict[str, Any]) -> Setting:
    """The organization's shop domain (the sample's Origin) declared and a site key made for it on the
    Events page, as the merchant does before pasting the snippet."""
    origin = event["headers"]["origin"]
    saved = env.api.post("/platform-ads/events/site", json={"domains": [origin]}, headers=env.org.headers)
    assert saved.status_code == 200, saved.text
    site = env.api.post("/platform-ads/events/site/key", headers=env.org.headers)
    assert site.status_code in (200, 201), site.text
    placeholder = event["rawQueryString"].removeprefix("key=")
    return Setting({placeholder: site.json()["siteKey"]})


SETUP: dict[str, Callable[[SampleContext, dict[str, Any]], Setting]] = {
    "site_events": with_a_site_key,
    "activation_step": with_an_accepted_activation,
    "account_closure_step": with_an_accepted_closure,
    "close_account": with_the_organizations_name,
    "audience_sync": with_a_segment_audience,
    "audience_sync_step": with_a_sync_to_step,
    "data_source_sync_job": with_a_sync_to_run,
    "send_purchase_events": with_a_synced_version,
    "sync_data_source": with_files_to_sync,
    "targeting_preview": with_a_trained_data_source,
    "ads_manager_link": with_an_audience,
    "get_activation": with_an_audience,
    "get_audience_lift": with_a_segment_audience,
    "retry_activation": with_a_failed_activation,
    "delete_advert": with_an_advert,
    "audience_snapshot": with_an_audience,
    "delete_audience": with_an_audience,
    "platform_callback": with_an_authorization_code,
    "payments_callback": with_a_payments_return,
    "disconnect_payments": with_payments_connected,
    "checkout_page": with_a_shop_taking_payments,
    "start_checkout": with_a_shop_taking_payments,
    "payments_webhook": with_a_signed_delivery,
    "publish_advert": with_an_audience,
    "refresh_audience": with_an_audience,
    "retrain_models": with_a_trained_data_source,
    "revoke_api_key": with_a_key_to_revoke,
    "train_model": with_shop_files,
}

# What a direct invocation returns for its sample, checked beyond being a result at all.
DIRECT_RESULTS: dict[str, Callable[[Any], None]] = {}


def direct(name: str) -> Callable[[Callable[[Any], None]], Callable[[Any], None]]:
    def register(check: Callable[[Any], None]) -> Callable[[Any], None]:
        DIRECT_RESULTS[name] = check
        return check

    return register


@direct("activation_step")
def _activated(result: Any) -> None:
    # The sample's step selects the accepted activation's users (the state machine's SelectUsers).
    assert result == {"outcome": "done", "next": None, "wait_seconds": 0, "batches_sent": 0}


@direct("account_closure_step")
def _closed(result: Any) -> None:
    # A new organization has little to delete: one step deletes it all.
    assert result == {"state": "completed", "phase": "done"}


@direct("data_source_sync_job")
def _synced(result: Any) -> None:
    assert result["state"] == "synced"
    # What the training jobs are given: the training arrays, and the good rows of each file.
    assert set(result["keys"]) == {"customers", "products", "orders", "training"}


@direct("send_purchase_events")
def _purchases_sent(result: Any) -> None:
    # The connected organization's version: every new order dealt with in one step.
    assert result["status"] == "done"
    assert result["position"] == result["in_window"]


@direct("train_model")
def _trained(result: Any) -> None:
    assert result["name"] == "purchase-likelihood"
    assert result["type"] == "purchase"
    assert {"roc_auc", "pr_auc", "lift_top_decile"} <= set(result["metrics"])


@direct("validate_tokens")
def _validated(result: Any) -> None:
    assert set(result) == {"checked", "valid", "expiring", "invalid", "failed", "drift"}
    assert set(result["drift"]) == {
        "organizations",
        "audiences_deleted",
        "lookalikes_deleted",
        "adverts_deleted",
        "audiences_changed",
        "failed",
    }
    assert result["checked"] == result["valid"] + result["expiring"] + result["invalid"] + result["failed"]


@direct("audience_sync_step")
def _sync_stepped(result: Any) -> None:
    # The segment's members fit in one batch, so one step scores, replaces and finishes.
    assert result == {"status": "done", "wait_seconds": 0, "batches_done": 1, "batches_total": 1}


@direct("sync_audiences")
def _syncs_started(result: Any) -> None:
    assert set(result) == {"organizations", "due", "started"}
    assert result["organizations"] >= 1
    assert result["due"] >= result["started"] >= 0


@direct("sweep_stranded_uploads")
def _swept(result: Any) -> None:
    assert set(result) == {"stranded", "resumed", "failed", "running"}
    assert result["stranded"] == result["resumed"] + result["failed"] + result["running"]


# Routes documenting more than one success: the one the sample asks for.
# the publish sample is a dry run (201 creates the advert); the create sample fits in its request (202:
# the upload continues in the state machine); the refresh sample sends users (202 syncs a segment
# audience now)
SUCCESS_OF_SAMPLE = {"publish_advert": 200, "create_audience": 201, "refresh_audience": 200}


def documented_success(route_key: str, sample_name: str) -> tuple[int, dict[str, Any] | None]:
    """The success status ``openapi.json`` documents for a route, and its JSON body schema."""
    method, path = route_key.split(" ", 1)
    responses = OPENAPI["paths"][path][method.lower()]["responses"]
    successes = {int(s): r for s, r in responses.items() if s.startswith(("2", "3"))}
    [status] = [SUCCESS_OF_SAMPLE[sample_name]] if sample_name in SUCCESS_OF_SAMPLE else list(successes)
    schema = successes[status].get("content", {}).get("application/json", {}).get("schema")
    return status, schema


def assert_matches(body: Any, schema: dict[str, Any]) -> None:
    validator = Draft202012Validator({**schema, "components": OPENAPI["components"]})
    problems = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(body)]
    assert problems == []


def test_every_sample_event_is_exercised() -> None:
    assert {path.stem for path in EVENTS} == set(FUNCTION_OF_EVENT)
    assert set(DIRECT_RESULTS) == {p.stem for p in EVENTS if "routeKey" not in sample(p)}


@pytest.mark.parametrize("path", EVENTS, ids=[p.stem for p in EVENTS])
def test_the_sample_event_gets_a_well_formed_answer_from_its_handler(
    path: Path, stack: LocalStack, api: httpx.Client, demo: DemoCredentials, org: ConnectedOrg
) -> None:
    # Given: the sample, with real values for its placeholders once the state it needs exists
    event = sample(path)
    env = SampleContext(stack, api, demo, org)
    setting = SETUP.get(path.stem, no_setting)(env, event)
    for placeholder, value in env.credentials(event).items():
        setting.replacements.setdefault(placeholder, value)  # a set-up's own caller comes first
    prepared = setting.apply(event)
    function = FUNCTION_OF_EVENT[path.stem]
    assert stack.gateway is not None

    # When: its function's handler is invoked with it, as Lambda would
    result = stack.gateway.invoke(function, prepared)

    # Then: an HTTP event gets its route's documented success; a direct invocation its result
    if "routeKey" not in event:
        DIRECT_RESULTS[path.stem](result)
        return
    assert event["routeKey"] in ROUTES_OF[function]
    assert event["requestContext"]["routeKey"] == event["routeKey"]
    status, schema = documented_success(event["routeKey"], path.stem)
    assert result["statusCode"] == status, result.get("body")
    if schema is not None and status != 204:
        assert_matches(json.loads(result["body"]), schema)
