"""Step Functions in the local stack: state machines from ``template.yaml`` created in moto and
executed for real by moto's ASL interpreter, with their Lambda tasks dispatched to the local runner
(``local.runner``: each function in workers of its own; moto's own Lambda runner needs Docker)."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable
from typing import Any

from moto.core.config import default_user_config
from moto.stepfunctions.parser.asl.component.state.exec.state_task import lambda_eval_utils

from local.runner import Invocation
from local.template import ROOT, Physical

# A function name (physical, from the task's Resource) and the event -> the finished invocation.
Invoke = Callable[[str, Any], Invocation]
# Step Functions' limit on a state's input or output (256 KiB of UTF-8); past it the execution fails
# with States.DataLimitExceeded.
MAX_STATE_PAYLOAD_BYTES = 262_144


class RunnerLambda:
    """The slice of a boto3 Lambda client the ASL interpreter uses, ``invoke``, answered by the
    local runner: a failed invocation is ``FunctionError: Unhandled`` with Lambda's error payload
    (``Sandbox.Timedout`` past the function's ``Timeout``, ``Runtime.ExitError`` for a killed
    worker), so Retry and Catch see the error names they see in AWS. A result larger than a state
    may carry fails the execution with ``States.DataLimitExceeded``, as Step Functions does (moto
    refuses a ``States.`` error from a task, so no Catch gets it)."""

    def __init__(self, invoke: Invoke, function_names: dict[str, str]) -> None:
        self._invoke = invoke
        self._function_names = function_names  # physical name -> logical id

    def invoke(self, FunctionName: str, Payload: bytes | str | None = None, **_: Any) -> dict[str, Any]:  # noqa: N803 - boto3's names
        name = FunctionName.rsplit(":", 1)[-1]
        function = self._function_names.get(name, name)
        invocation = self._invoke(function, json.loads(Payload or b"{}"))
        if invocation.error is not None:
            return _function_error(invocation.error)
        body = json.dumps(invocation.result).encode()
        if len(body) > MAX_STATE_PAYLOAD_BYTES:
            return _function_error(
                {
                    "errorType": "States.DataLimitExceeded",
                    "errorMessage": f"The state/task '{name}' returned a result with a size exceeding "
                    f"the maximum number of bytes service limit ({len(body)} > {MAX_STATE_PAYLOAD_BYTES}).",
                }
            )
        return {"StatusCode": 200, "Payload": io.BytesIO(body)}


def _function_error(body: dict[str, Any]) -> dict[str, Any]:
    # A failed invocation is still HTTP 200 from Invoke, with FunctionError set.
    return {"StatusCode": 200, "FunctionError": "Unhandled", "Payload": io.BytesIO(json.dumps(body).encode())}


def execute_state_machines() -> None:
    """Make moto interpret executions (set before any state machine is created: moto keeps
    interpreted state machines in a backend of their own)."""
    default_user_config.setdefault("stepfunctions", {})["execute_state_machine"] = True


def dispatch_lambda_tasks(invoke: Invoke, function_names: dict[str, str]) -> None:
    """Send the Lambda tasks of executing state machines to ``invoke`` (logical id, event): the
    local runner, which holds each to its function's ``Timeout`` and limits."""
    original = lambda_eval_utils.boto_client_for

    def client_for(region: str, service: str, state_credentials: Any = None) -> Any:
        if service == "lambda":
            return RunnerLambda(invoke, function_names)
        return original(region=region, service=service, state_credentials=state_credentials)

    lambda_eval_utils.boto_client_for = client_for


def definition(properties: dict[str, Any], substitutions: dict[str, str]) -> str:
    """The ASL document of a Serverless state machine with its ``${...}`` substitutions applied."""
    text = (ROOT / properties["DefinitionUri"]).read_text()
    return re.sub(r"\$\{(\w+)\}", lambda m: substitutions.get(m.group(1), m.group(0)), text)


def create_state_machine(sfn: Any, name: str, asl: str, account: str) -> Physical:
    arn = sfn.create_state_machine(
        name=name, definition=asl, roleArn=f"arn:aws:iam::{account}:role/{name}-role"
    )["stateMachineArn"]
    return Physical(ref=arn, attrs={"Arn": arn, "Name": name})
