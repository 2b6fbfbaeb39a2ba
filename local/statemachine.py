"""Step Functions in the local stack: state machines from ``template.yaml`` created in moto and
executed for real by moto's ASL interpreter, with their Lambda tasks dispatched to the handlers
in this process (moto's own Lambda runner needs Docker)."""

from __future__ import annotations

import io
import json
import re
import traceback
import uuid
from collections.abc import Callable
from typing import Any

from moto.core.config import default_user_config
from moto.stepfunctions.parser.asl.component.state.exec.state_task import lambda_eval_utils

from local.template import ROOT, Physical

Invoke = Callable[[str, dict[str, Any]], Any]


class InProcessLambda:
    """The slice of a boto3 Lambda client the ASL interpreter uses: ``invoke``."""

    def __init__(self, invoke: Invoke, function_names: dict[str, str]) -> None:
        self._invoke = invoke
        self._function_names = function_names  # physical name -> logical id

    def invoke(self, FunctionName: str, Payload: bytes | str | None = None, **_: Any) -> dict[str, Any]:  # noqa: N803 - boto3's names
        name = FunctionName.rsplit(":", 1)[-1]
        function = self._function_names.get(name, name)
        event = json.loads(Payload or b"{}")
        request_id = str(uuid.uuid4())
        try:
            result = self._invoke(function, event)
        except WorkerKilled:
            # The runtime process died mid-invocation (OOM, SIGKILL): Lambda reports Runtime.ExitError.
            return _function_error(
                {
                    "errorType": "Runtime.ExitError",
                    "errorMessage": f"RequestId: {request_id} Error: Runtime exited with error: "
                    "signal: killed",
                }
            )
        except Exception as exc:
            return _function_error(lambda_error_payload(exc))
        return {"StatusCode": 200, "Payload": io.BytesIO(json.dumps(result, default=str).encode())}


class WorkerKilled(BaseException):
    """Raised (by a test) inside a locally invoked function to stand for its process being killed:
    a BaseException, so the function's own ``except Exception`` and saving code do not run for it."""


def lambda_error_payload(exc: BaseException) -> dict[str, Any]:
    """Exactly what the Python runtime returns for an unhandled exception (the handbook's
    reference/aws-facts.md, "Lambda errors seen by Step Functions"): errorMessage, errorType
    (the class name) and stackTrace; nothing else, so nothing local-only reaches a Catch."""
    return {
        "errorMessage": str(exc),
        "errorType": type(exc).__name__,
        "stackTrace": [line for frame in traceback.format_tb(exc.__traceback__) for line in [frame]],
    }


def _function_error(body: dict[str, Any]) -> dict[str, Any]:
    # A failed invocation is still HTTP 200 from Invoke, with FunctionError set.
    return {"StatusCode": 200, "FunctionError": "Unhandled", "Payload": io.BytesIO(json.dumps(body).encode())}


def execute_state_machines() -> None:
    """Make moto interpret executions (set before any state machine is created: moto keeps
    interpreted state machines in a backend of their own)."""
    default_user_config.setdefault("stepfunctions", {})["execute_state_machine"] = True


def dispatch_lambda_tasks(invoke: Invoke, function_names: dict[str, str]) -> None:
    """Send the Lambda tasks of executing state machines to ``invoke`` (logical id, event)."""
    original = lambda_eval_utils.boto_client_for

    def client_for(region: str, service: str, state_credentials: Any = None) -> Any:
        if service == "lambda":
            return InProcessLambda(invoke, function_names)
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
