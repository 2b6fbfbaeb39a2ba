"""``make smoke STACK=…`` finds the API and each function's log group in the deployed stack (the
calls themselves run against the local stack in tests/integration/test_smoke.py)."""

from __future__ import annotations

import json

import boto3
import pytest

from scripts.smoke import log_group_ids, stack_target
from tests.unit.moto_aws import REGION, offline_aws

# A stack with what the smoke test reads: the outputs, and one function's log group.
TEMPLATE = {
    "Resources": {
        "ListModelsLogs": {"Type": "AWS::Logs::LogGroup", "Properties": {"LogGroupName": "lm-logs"}}
    },
    "Outputs": {
        "ApiUrl": {"Value": "https://api.example.com"},
        "UserPoolClientId": {"Value": "client-1"},
    },
}


def test_the_stack_gives_the_api_and_each_functions_log_group(monkeypatch: pytest.MonkeyPatch) -> None:
    with offline_aws(monkeypatch):
        # Given: a deployed stack
        boto3.client("cloudformation", region_name=REGION).create_stack(
            StackName="smoke-stack", TemplateBody=json.dumps(TEMPLATE)
        )

        # When: the smoke test's target is read from it
        target = stack_target("smoke-stack", REGION, "svc_key", "a-token", None)

    # Then: the API URL is the output, and a failure of ListModelsFunction points at its real group
    assert target.api_url == "https://api.example.com"
    assert log_group_ids()["ListModelsFunction"] == "ListModelsLogs"
    assert target.log_groups["ListModelsFunction"] == "lm-logs"


def test_without_a_token_or_a_user_it_says_what_it_needs(monkeypatch: pytest.MonkeyPatch) -> None:
    with offline_aws(monkeypatch):
        boto3.client("cloudformation", region_name=REGION).create_stack(
            StackName="smoke-stack", TemplateBody=json.dumps(TEMPLATE)
        )
        with pytest.raises(SystemExit, match="--username and --password"):
            stack_target("smoke-stack", REGION, "svc_key", None, None)
