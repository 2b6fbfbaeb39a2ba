"""The local stack's Step Functions tasks see their function's invocation as Lambda's Invoke reports
it: a failed one (``Sandbox.Timedout`` past the function's Timeout, the runner's business) is
``FunctionError: Unhandled`` with the error payload, which Step Functions names after ``errorType``
and gives as the cause; a result past the 256 KB a state may carry fails the task.

The state machine runs in moto's ASL interpreter, as in the local stack; the invocations are the
runner's (``tests/unit/test_runner.py`` holds the runner to Lambda's rules)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws
from moto.core.config import default_user_config
from moto.stepfunctions.parser.asl.component.state.exec.state_task import lambda_eval_utils

from local.runner import Invocation, timed_out_payload
from local.statemachine import MAX_STATE_PAYLOAD_BYTES, dispatch_lambda_tasks
from local.template import functions, load_template

ACCOUNT = "123456789012"
FUNCTION = "StepFunction"
PHYSICAL = "local-StepFunction"
# One task, with a Catch that keeps what the task failed with, as the activation's RecordFailure reads it.
ASL = {
    "StartAt": "Step",
    "States": {
        "Step": {
            "Type": "Task",
            "Resource": f"arn:aws:lambda:eu-west-1:{ACCOUNT}:function:{PHYSICAL}",
            "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.error", "Next": "Failed"}],
            "End": True,
        },
        "Failed": {"Type": "Pass", "End": True},
    },
}


@pytest.fixture
def sfn(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """moto's Step Functions interpreting executions; the dispatcher's patch is undone afterwards."""
    monkeypatch.setitem(default_user_config, "stepfunctions", {"execute_state_machine": True})
    monkeypatch.setattr(lambda_eval_utils, "boto_client_for", lambda_eval_utils.boto_client_for)
    with mock_aws():
        yield boto3.client("stepfunctions", region_name="eu-west-1")


def run(sfn: Any, invocation: Invocation) -> dict[str, Any]:
    """Execute the one-task state machine, its task answered by ``invocation``; the finished execution."""
    invoked: list[str] = []

    def invoke(function: str, event: Any) -> Invocation:
        invoked.append(function)
        return invocation

    dispatch_lambda_tasks(invoke, {PHYSICAL: FUNCTION})
    machine = sfn.create_state_machine(
        name="steps", definition=json.dumps(ASL), roleArn=f"arn:aws:iam::{ACCOUNT}:role/steps"
    )["stateMachineArn"]
    execution = sfn.start_execution(stateMachineArn=machine, input="{}")["executionArn"]
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        described: dict[str, Any] = sfn.describe_execution(executionArn=execution)
        if described["status"] != "RUNNING":
            assert invoked == [FUNCTION]
            return described
        time.sleep(0.05)
    raise AssertionError("the execution did not finish")


def invocation(result: Any = None, error: dict[str, Any] | None = None) -> Invocation:
    return Invocation(
        FUNCTION, "r-1", cold_start=False, duration_ms=1.0, peak_memory_mb=50.0, result=result, error=error
    )


def test_a_timed_out_task_fails_with_sandbox_timedout_and_lambdas_payload_as_cause(sfn: Any) -> None:
    # Given an invocation the runner stopped at the function's Timeout
    payload = timed_out_payload("0f1e2d3c-0000-4000-8000-000000000000", 1)

    # When a state machine runs it as a task
    execution = run(sfn, invocation(error=payload))

    # Then the task failed with Lambda's error name and exact payload as the cause
    assert execution["status"] == "SUCCEEDED", execution
    error = json.loads(execution["output"])["error"]
    assert error["Error"] == "Sandbox.Timedout"
    assert json.loads(error["Cause"]) == payload


def test_a_task_gives_its_functions_result(sfn: Any) -> None:
    # When a state machine runs a task whose function answered
    execution = run(sfn, invocation(result={"function": FUNCTION, "done": True}))

    # Then its result is the task's output
    assert execution["status"] == "SUCCEEDED", execution
    assert json.loads(execution["output"]) == {"function": FUNCTION, "done": True}


def test_a_result_larger_than_a_state_may_carry_fails_the_task(sfn: Any) -> None:
    # When the function's result is over 256 KB
    execution = run(sfn, invocation(result={"rows": "x" * MAX_STATE_PAYLOAD_BYTES}))

    # Then the execution failed, naming Step Functions' error for it; a Catch does not get it
    assert execution["status"] == "FAILED", execution
    assert "States.DataLimitExceeded" in json.dumps(execution, default=str)


def test_the_local_stack_holds_each_function_to_the_templates_timeout() -> None:
    # Given the functions of template.yaml as the local stack reads them for the dispatcher
    specs = functions(load_template())
    # Then a function's own Timeout wins, and one without it has the Globals' (as SAM merges them)
    assert specs["ActivationStepFunction"].timeout == 300
    assert specs["DataSourceSyncJobFunction"].timeout == 900
    assert specs["GetUsageFunction"].timeout == 29
