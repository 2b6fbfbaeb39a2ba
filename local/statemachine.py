"""Step Functions in the local stack: state machines from ``template.yaml`` created in moto and
executed for real by moto's ASL interpreter, with their Lambda tasks dispatched to the handlers
in this process (moto's own Lambda runner needs Docker)."""

from __future__ import annotations

import ctypes
import io
import json
import re
import threading
import traceback
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from moto.core.config import default_user_config
from moto.stepfunctions.parser.asl.component.state.exec.state_task import lambda_eval_utils

from local.template import ROOT, Physical

Invoke = Callable[[str, dict[str, Any]], Any]


class InProcessLambda:
    """The slice of a boto3 Lambda client the ASL interpreter uses: ``invoke``.

    Each invocation runs in a thread of its own and is held to its function's ``Timeout`` from the
    template, as Lambda holds it: past it the task gets exactly the payload Lambda returns for a
    timed-out function (``timed_out_payload``), so the state machine's Retry and Catch see the error
    name ``Sandbox.Timedout`` they see in AWS. The function's thread is then stopped with
    ``FunctionTimedOut``, which its own ``except Exception`` does not catch: Lambda stops the sandbox
    there, so nothing more of the function runs."""

    def __init__(self, invoke: Invoke, function_names: dict[str, str], timeouts: Mapping[str, float]) -> None:
        self._invoke = invoke
        self._function_names = function_names  # physical name -> logical id
        self._timeouts = timeouts  # logical id -> seconds

    def timeout_of(self, function_name: str) -> float:
        """The ``Timeout`` (seconds) the function named (physically) is held to."""
        return self._timeouts[self._function_names.get(function_name, function_name)]

    def invoke(self, FunctionName: str, Payload: bytes | str | None = None, **_: Any) -> dict[str, Any]:  # noqa: N803 - boto3's names
        name = FunctionName.rsplit(":", 1)[-1]
        function = self._function_names.get(name, name)
        event = json.loads(Payload or b"{}")
        request_id = str(uuid.uuid4())
        timeout = self.timeout_of(name)
        call = _Invocation(lambda: self._invoke(function, event))
        if not call.finished_within(timeout):
            call.stop()
            return _function_error(timed_out_payload(request_id, timeout))
        if isinstance(call.error, WorkerKilled):
            # The runtime process died mid-invocation (OOM, SIGKILL): Lambda reports Runtime.ExitError.
            return _function_error(
                {
                    "errorType": "Runtime.ExitError",
                    "errorMessage": f"RequestId: {request_id} Error: Runtime exited with error: "
                    "signal: killed",
                }
            )
        if isinstance(call.error, Exception):
            return _function_error(lambda_error_payload(call.error))
        if call.error is not None:
            raise call.error
        return {"StatusCode": 200, "Payload": io.BytesIO(json.dumps(call.result, default=str).encode())}


class WorkerKilled(BaseException):
    """Raised (by a test) inside a locally invoked function to stand for its process being killed:
    a BaseException, so the function's own ``except Exception`` and saving code do not run for it."""


class FunctionTimedOut(BaseException):
    """Raised inside a locally invoked function's thread when it outlives its ``Timeout``: a
    BaseException, so the function's own ``except Exception`` and saving code do not run for it."""


def timed_out_payload(request_id: str, timeout: float) -> dict[str, Any]:
    """Exactly what Lambda returns (``FunctionError: Unhandled``) for a function that ran past its
    ``Timeout``: the error name Step Functions matches is ``Sandbox.Timedout``, and there is no
    stack trace (the runtime did not raise: Lambda stopped it)."""
    return {
        "errorType": "Sandbox.Timedout",
        "errorMessage": f"RequestId: {request_id} Error: Task timed out after {timeout:.2f} seconds",
    }


class _Invocation:
    """One call of a handler on a thread of its own, so that it can be given up on at a deadline."""

    def __init__(self, call: Callable[[], Any]) -> None:
        self.result: Any = None
        self.error: BaseException | None = None
        self._call = call
        self._thread = threading.Thread(target=self._run, name="local-lambda", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self.result = self._call()
        except FunctionTimedOut:
            pass
        except BaseException as exc:  # handed to the caller's thread as the runtime would report it
            self.error = exc

    def finished_within(self, seconds: float) -> bool:
        self._thread.join(seconds)
        return not self._thread.is_alive()

    def stop(self) -> None:
        """Raise ``FunctionTimedOut`` in the handler's thread (at its next Python instruction: a
        blocking call it is in finishes first)."""
        ident = self._thread.ident
        if ident is not None and self._thread.is_alive():
            ctypes.pythonapi.PyThreadState_SetAsyncExc(
                ctypes.c_ulong(ident), ctypes.py_object(FunctionTimedOut)
            )


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


def dispatch_lambda_tasks(
    invoke: Invoke, function_names: dict[str, str], timeouts: Mapping[str, float]
) -> None:
    """Send the Lambda tasks of executing state machines to ``invoke`` (logical id, event), each
    held to its function's ``timeouts`` entry (logical id -> the template's ``Timeout``, seconds)."""
    original = lambda_eval_utils.boto_client_for

    def client_for(region: str, service: str, state_credentials: Any = None) -> Any:
        if service == "lambda":
            return InProcessLambda(invoke, function_names, timeouts)
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
