"""The AWS calls issue 24 found outside the functions' roles, each made on the local stack, where
every function signs with its own role's credentials and a call the role does not allow is refused
with AccessDenied, as on AWS (``local.iam``). Each test fails on a template without the grant.

Every other test on the stack proves its functions' permissions too (``no_call_denied`` in
``conftest.py``); these name the ones the issue listed."""

from __future__ import annotations

import uuid
from typing import Any

import boto3
import httpx
import pytest

from local.connected import ConnectedOrg
from local.stack import LocalStack
from shared import wiring
from shared.errors import Conflict
from shared.repositories.activations import StepFunctionsStarter
from shared.repositories.blobs import S3BlobStore
from tests.integration.test_activation_pipeline import users, wait_until


def activation(api: httpx.Client, org: ConnectedOrg, sandbox: httpx.Client, *, fail: bool = False) -> str:
    """An activation run to its end (failed on the platform's terms if ``fail``); its audience id."""
    if fail:
        sandbox.post(
            "/faults",
            json={
                "kind": "error",
                "method": "POST",
                "path": "/customaudiences$",
                "code": 200,
                "subcode": 1870090,
            },
        )
    headers = {**org.headers, "Idempotency-Key": f"grants-{uuid.uuid4()}"}
    accepted = api.post(
        "/platform-ads/activations", json={"name": "Grants", "users": users(20, "g")}, headers=headers
    )
    assert accepted.status_code == 202, accepted.text
    audience_id: str = accepted.json()["audienceId"]
    wait_until(api, org, audience_id, "failed" if fail else "succeeded")
    sandbox.delete("/faults")
    return audience_id


def test_the_audiences_list_reads_the_platform_secret_and_decrypts_it(
    stack: LocalStack, api: httpx.Client, org: ConnectedOrg
) -> None:
    # When (ListAudiences builds the audience service, which reads the platform secret at once)
    response = api.get("/platform-ads/audiences", headers=org.headers)
    # Then
    assert response.status_code == 200, response.text
    assert stack.denied_calls() == []


def test_an_activations_status_reads_the_platform_secret_and_decrypts_it(
    stack: LocalStack, api: httpx.Client, org: ConnectedOrg, sandbox: httpx.Client
) -> None:
    audience_id = activation(api, org, sandbox)
    stack.clear_denied_calls()
    # When (GetActivation)
    response = api.get(f"/platform-ads/activations/{audience_id}", headers=org.headers)
    # Then
    assert response.status_code == 200, response.text
    assert stack.denied_calls() == []


def test_a_snapshot_link_reads_the_platform_secret_and_decrypts_it(
    stack: LocalStack, api: httpx.Client, org: ConnectedOrg, sandbox: httpx.Client
) -> None:
    audience_id = activation(api, org, sandbox)
    stack.clear_denied_calls()
    # When (AudienceSnapshot)
    response = api.get(f"/platform-ads/audiences/{audience_id}/snapshot", headers=org.headers)
    # Then
    assert response.status_code == 200, response.text
    assert stack.denied_calls() == []


def test_an_ads_manager_link_reads_the_platform_secret_and_decrypts_it(
    stack: LocalStack, api: httpx.Client, org: ConnectedOrg, sandbox: httpx.Client
) -> None:
    audience_id = activation(api, org, sandbox)
    stack.clear_denied_calls()
    # When (AdsManagerLink)
    response = api.get(f"/platform-ads/audiences/{audience_id}/ads-manager-link", headers=org.headers)
    # Then
    assert response.status_code == 200, response.text
    assert stack.denied_calls() == []


def test_a_retry_reads_the_platform_secret_and_decrypts_it(
    stack: LocalStack, api: httpx.Client, org: ConnectedOrg, sandbox: httpx.Client
) -> None:
    audience_id = activation(api, org, sandbox, fail=True)
    stack.clear_denied_calls()
    # When (RetryActivation)
    response = api.post(f"/platform-ads/activations/{audience_id}/retry", headers=org.headers)
    # Then
    assert response.status_code == 202, response.text
    assert stack.denied_calls() == []


def test_revoking_a_key_marks_its_usage_days_in_the_usage_table(
    stack: LocalStack, api: httpx.Client, org: ConnectedOrg
) -> None:
    created = api.post("/dashboard/api-keys", json={"label": "to revoke"}, headers=org.headers)
    assert created.status_code == 201, created.text
    # When (RevokeApiKey: DynamoKeyDayMeter.mark_revoked writes the usage table)
    response = api.delete(f"/dashboard/api-keys/{created.json()['keyId']}", headers=org.headers)
    # Then
    assert response.status_code == 200, response.text
    assert stack.denied_calls() == []
    usage = boto3.resource("dynamodb", region_name="eu-west-1", endpoint_url=stack.moto_url).Table(
        wiring.settings().usage_table
    )
    revoked = [item for item in usage.scan()["Items"] if item.get("key_id") == created.json()["keyId"]]
    assert revoked
    assert all(item.get("revoked_at") for item in revoked)


def test_the_scheduled_sync_may_delete_the_users_a_finished_run_stored(stack: LocalStack) -> None:
    # Given a run's stored users (SyncAudiences closes a run whose account is no longer connected,
    # and deletes them: AudienceSyncService._close -> S3BlobStore.delete)
    key = f"sources/org-{uuid.uuid4().hex[:8]}/sync-run.json"
    wiring.data_blobs().put(key, b"[]")
    blobs = S3BlobStore(
        stack.client_as(
            "SyncAudiencesFunction", "s3", signature_version="s3v4", s3={"addressing_style": "path"}
        ),
        wiring.settings().data_bucket,
        wiring.settings().kms_key_id,
    )
    # When
    blobs.delete(key)
    # Then
    assert not wiring.data_blobs().exists(key)
    assert stack.denied_calls() == []


STARTERS = {
    "CloseAccountFunction": "CLOSURE_STATE_MACHINE_ARN",
    "RetrainModelsFunction": "DATA_SOURCE_STATE_MACHINE_ARN",
    "SyncDataSourceFunction": "DATA_SOURCE_STATE_MACHINE_ARN",
    "RefreshAudienceFunction": "AUDIENCE_SYNC_STATE_MACHINE_ARN",
    "SyncAudiencesFunction": "AUDIENCE_SYNC_STATE_MACHINE_ARN",
}


@pytest.mark.parametrize("function", sorted(STARTERS))
def test_a_start_whose_answer_was_lost_reads_the_existing_execution(stack: LocalStack, function: str) -> None:
    # Given an execution of that name already there, with another input
    arn = stack.function_environment(function)[STARTERS[function]]
    start = StepFunctionsStarter(stack.client_as(function, "stepfunctions"), arn)
    name = f"taken-{uuid.uuid4().hex[:12]}"
    admin = stack.client("stepfunctions")
    admin.start_execution(stateMachineArn=arn, name=name, input=_json({"org_id": "org-none", "other": name}))
    # When the function starts its own (ExecutionAlreadyExists -> DescribeExecution to compare inputs)
    with pytest.raises(Conflict):
        start(name, {"org_id": "org-none", "probe": name})
    # Then it could read the existing execution, and refused the clash as a conflict
    assert stack.denied_calls() == []


def _json(payload: dict[str, Any]) -> str:
    import json

    return json.dumps(payload, sort_keys=True)
