"""``make smoke`` against the local stack, so the deployed smoke test cannot rot (issue 24, item 6):
its calls pass on a healthy stack, and a failing one is reported with the log group to read."""

from __future__ import annotations

import httpx

from local.connected import ConnectedOrg
from local.seed import DemoCredentials
from local.stack import LocalStack
from scripts.smoke import Target, main, report, run_smoke, template_log_groups
from tests.integration.test_sample_events import sample_body

CHECKS = ["models", "training users", "predict", "connection status", "audiences", "dry-run activation"]


def with_an_active_audience(api: httpx.Client, org: ConnectedOrg) -> str:
    created = api.post(
        "/platform-ads/audiences",
        json={**sample_body("create_audience"), "name": "smoke"},
        headers=org.headers,
    )
    assert created.status_code == 201, created.text
    audience_id: str = created.json()["audienceId"]
    return audience_id


def token_of(org: ConnectedOrg) -> str:
    return org.headers["Authorization"].removeprefix("Bearer ")


def test_every_check_passes_against_a_healthy_stack(
    stack: LocalStack, api: httpx.Client, demo: DemoCredentials, org: ConnectedOrg
) -> None:
    # Given: a shop with trained models (its API key) and a connected one with an active audience
    with_an_active_audience(api, org)
    target = Target(api_url=stack.api_url, api_key=demo.api_key, id_token=token_of(org))

    # When: the smoke test runs
    checks = run_smoke(target)

    # Then: every call was made and answered as documented
    assert [check.name for check in checks] == CHECKS
    assert all(check.passed and not check.skipped for check in checks), report(checks)


def test_a_failing_call_is_reported_with_the_log_group_to_read(stack: LocalStack, org: ConnectedOrg) -> None:
    # Given: a key the stack does not know
    groups = template_log_groups()
    target = Target(
        api_url=stack.api_url, api_key="svc_unknown000_x", id_token=token_of(org), log_groups=groups
    )

    # When: the smoke test runs
    checks = run_smoke(target)

    # Then: the models call failed with its status, naming the log group of the function behind it
    models = checks[0]
    assert models.name == "models"
    assert not models.passed
    assert models.detail.startswith("401 (expected 200)")
    assert models.log_group == groups["ListModelsFunction"]
    assert f"logs: {groups['ListModelsFunction']}" in report(checks)


def test_make_smoke_exits_non_zero_when_a_check_fails(stack: LocalStack, org: ConnectedOrg) -> None:
    # When: make smoke runs with an unknown key
    code = main(
        ["--url", stack.api_url, "--api-key", "svc_unknown000_x", "--token", token_of(org)], environ={}
    )

    # Then: it fails
    assert code == 1
