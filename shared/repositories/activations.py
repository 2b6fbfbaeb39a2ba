"""Starting activation executions on the Step Functions state machine, one per attempt."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from shared.errors import Conflict
from shared.observability import logger

if TYPE_CHECKING:
    from mypy_boto3_stepfunctions import SFNClient


class StepFunctionsStarter:
    """Starts an execution per activation attempt, named ``<audienceId>-<attempt>`` (the attempt is
    claimed on the audience with a conditional write first, so a name is never meant twice).

    ``ExecutionAlreadyExists`` is not swallowed: it is accepted only when the existing execution has
    this very input (an earlier try of the same start, whose answer was lost); otherwise it is a
    ``Conflict``."""

    def __init__(self, sfn: SFNClient, state_machine_arn: str) -> None:
        self._sfn = sfn
        self._arn = state_machine_arn

    def __call__(self, name: str, payload: dict[str, str]) -> None:
        body = json.dumps(payload, sort_keys=True)
        try:
            self._sfn.start_execution(stateMachineArn=self._arn, name=name, input=body)
        except self._sfn.exceptions.ExecutionAlreadyExists as exc:
            existing = self._sfn.describe_execution(executionArn=self.execution_arn(name))
            if json.loads(existing.get("input") or "{}") != payload:
                raise Conflict(
                    f"An activation execution named {name} exists with another input.",
                    remedy="Retry the activation: the next attempt gets a new execution.",
                ) from exc
            logger.info("activation execution already started", extra={"execution": name})

    def running(self, name: str) -> bool:
        """Whether the execution ``name`` exists and is still running."""
        try:
            found = self._sfn.describe_execution(executionArn=self.execution_arn(name))
        except self._sfn.exceptions.ExecutionDoesNotExist:
            return False
        return found["status"] == "RUNNING"

    def execution_arn(self, name: str) -> str:
        return f"{self._arn.replace(':stateMachine:', ':execution:', 1)}:{name}"
