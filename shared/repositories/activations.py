"""Starting activation executions on the Step Functions state machine."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mypy_boto3_stepfunctions import SFNClient


class StepFunctionsStarter:
    """Starts one execution per audience, named after it: Step Functions refuses a second
    execution with the same name, which makes a repeated start harmless."""

    def __init__(self, sfn: SFNClient, state_machine_arn: str) -> None:
        self._sfn = sfn
        self._arn = state_machine_arn

    def __call__(self, name: str, payload: dict[str, str]) -> None:
        try:
            self._sfn.start_execution(stateMachineArn=self._arn, name=name, input=json.dumps(payload))
        except self._sfn.exceptions.ExecutionAlreadyExists:
            return
