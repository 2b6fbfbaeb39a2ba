"""The local stack's Step Functions tasks are held to their functions' Timeout as Lambda holds them:
past it the state machine sees the error Lambda reports for a timed-out function, ``Sandbox.Timedout``
with its exact payload (docs: Lambda's Invoke answers ``FunctionError: Unhandled`` with
``{"errorType": "Sandbox.Timedout", "errorMessage": "RequestId: … Error: Task timed out after N.NN
seconds"}``; Step Functions names the error after ``errorType`` and gives the payload as the cause).

The state machine runs in moto's ASL interpreter, as in the local stack; only the function is ours."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws
from moto.core.config import default_user_config
from moto.stepfunctions.parser.asl.component.state.exec.state_task import lambda_eval_utils

from local.statemachine import dispatch_lambda_tasks
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
            "Catch": [{"ErrorEquals": ["Sandbox.Timedout"], "ResultPath": "$.error", "Next": "TimedOut"}],
            "End": True,
        },
        "TimedOut": {"Type": "Pass", "End": True},
    },
}


@pytest.fixture
def sfn(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """moto's Step Functions interpreting executions; the dispatcher's patch is undone afterwards."""
    monkeypatch.setitem(default_user_config, "stepfunctions", {"execute_state_machine": True})
    monkeypatch.setattr(lambda_eval_utils, "boto_client_for", lambda_eval_utils.boto_client_for)
    with mock_aws():
        yield boto3.client("stepfunctions", region_name="eu-west-1")


def run(sfn: Any, handler: Callable[[str, dict[str, Any]], Any], timeout: float) -> dict[str, Any]:
    """Execute the one-task state machine with ``handler`` as its function, held to ``timeout``;
    the finished execution."""
    dispatch_lambda_tasks(handler, {PHYSICAL: FUNCTION}, {FUNCTION: timeout})
    machine = sfn.create_state_machine(
        name="steps", definition=json.dumps(ASL), roleArn=f"arn:aws:iam::{ACCOUNT}:role/steps"
    )["stateMachineArn"]
    execution = sfn.start_execution(stateMachineArn=machine, input="{}")["executionArn"]
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        described: dict[str, Any] = sfn.describe_execution(executionArn=execution)
        if described["status"] != "RUNNING":
            return described
        time.sleep(0.05)
    raise AssertionError("the execution did not finish")


def test_a_task_whose_function_outlives_its_timeout_fails_with_sandbox_timedout(sfn: Any) -> None:
    # Given a function that takes longer than its 1-second Timeout, and would write when done
    finished = threading.Event()
    began: list[float] = []

    def slow(function: str, event: dict[str, Any]) -> dict[str, Any]:
        began.append(time.time())
        for _ in range(40):
            time.sleep(0.05)
        finished.set()
        return {"done": True}

    # When a state machine runs it as a task
    execution = run(sfn, slow, timeout=1)

    # Then the task failed at the timeout with Lambda's error name and exact payload as the cause
    assert execution["status"] == "SUCCEEDED", execution
    error = json.loads(execution["output"])["error"]
    assert error["Error"] == "Sandbox.Timedout"
    cause = json.loads(error["Cause"])
    assert set(cause) == {"errorType", "errorMessage"}
    assert cause["errorType"] == "Sandbox.Timedout"
    assert re.fullmatch(
        r"RequestId: [0-9a-f-]{36} Error: Task timed out after 1\.00 seconds", cause["errorMessage"]
    )
    assert execution["stopDate"].timestamp() - began[0] < 1.9
    # And the function was stopped there: it never reached its end
    time.sleep(1.5)
    assert not finished.is_set()


def test_a_task_that_finishes_within_its_timeout_gives_its_result(sfn: Any) -> None:
    # Given a function that answers well within its Timeout
    def quick(function: str, event: dict[str, Any]) -> dict[str, Any]:
        return {"function": function, "done": True}

    # When a state machine runs it
    execution = run(sfn, quick, timeout=5)

    # Then its result is the task's output
    assert execution["status"] == "SUCCEEDED", execution
    assert json.loads(execution["output"]) == {"function": FUNCTION, "done": True}


def test_the_local_stack_holds_each_function_to_the_templates_timeout() -> None:
    # Given the functions of template.yaml as the local stack reads them for the dispatcher
    specs = functions(load_template())
    # Then a function's own Timeout wins, and one without it has the Globals' (as SAM merges them)
    assert specs["ActivationStepFunction"].timeout == 300
    assert specs["DataSourceSyncJobFunction"].timeout == 900
    assert specs["GetUsageFunction"].timeout == 29
