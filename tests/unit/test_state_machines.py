"""Every state machine of the template never hangs and never loses a failure (issue 24, item 4).

Walks every Task of every ``statemachine/*.asl.json`` (Parallel branches and Map processors
included) and holds it to three rules:

- **Retry** on Lambda's transient errors (the invocation failed before or around the function:
  ``Lambda.ServiceException``, ``Lambda.AWSLambdaException``, ``Lambda.SdkClientException``,
  ``Lambda.TooManyRequestsException``), or on ``States.ALL``;
- **Catch** of ``States.ALL`` that goes to a task recording the failure (a state named
  ``Record…`` that reads the caught error where the Catch put it), so a crash, a timeout or a
  killed process ends as a recorded failure, never as a record left ``running``; a recording task
  itself catches to the end of its branch;
- **TimeoutSeconds**, at most the ``Timeout`` of the function it invokes (read from
  ``template.yaml`` through the state machine's ``DefinitionSubstitutions``), so a task that hangs
  is given up on no later than Lambda would stop it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from local.template import ROOT, functions, load_template, resources_of_type

TRANSIENT_LAMBDA_ERRORS = {
    "Lambda.ServiceException",
    "Lambda.AWSLambdaException",
    "Lambda.SdkClientException",
    "Lambda.TooManyRequestsException",
}
ASL_FILES = sorted((ROOT / "statemachine").glob("*.asl.json"))


def states_of(document: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(name, state, the States it belongs to) of every state, nested ones included."""
    for name, state in document["States"].items():
        yield name, state, document["States"]
        for branch in state.get("Branches", []):
            yield from states_of(branch)
        for key in ("Iterator", "ItemProcessor"):
            if key in state:
                yield from states_of(state[key])


def tasks() -> list[tuple[str, str, dict[str, Any], dict[str, Any]]]:
    found = []
    for path in ASL_FILES:
        for name, state, siblings in states_of(json.loads(path.read_text())):
            if state["Type"] == "Task":
                found.append((path.name, name, state, siblings))
    return found


TASKS = tasks()
TASK_IDS = [f"{file}:{name}" for file, name, _, _ in TASKS]


def is_recorder(name: str) -> bool:
    return name.startswith("Record")


def function_timeouts() -> dict[str, dict[str, int]]:
    """Per ASL file, the ``${…}`` substitution -> the ``Timeout`` of the function it names."""
    template = load_template()
    specs = functions(template)
    found: dict[str, dict[str, int]] = {}
    for machine in resources_of_type(template, "AWS::Serverless::StateMachine").values():
        props = machine["Properties"]
        file = Path(props["DefinitionUri"]).name
        found[file] = {}
        for placeholder, value in props.get("DefinitionSubstitutions", {}).items():
            if isinstance(value, dict) and "Fn::GetAtt" in value:
                target, _ = value["Fn::GetAtt"]
                if target in specs:
                    found[file][placeholder] = specs[target].timeout
    return found


TIMEOUTS = function_timeouts()


def test_every_state_machine_file_is_walked() -> None:
    # Given / When: the ASL files and the template's state machines
    # Then: each file is a template state machine with tasks to check
    assert ASL_FILES, "no state machine found"
    assert {path.name for path in ASL_FILES} == set(TIMEOUTS)
    assert {file for file, *_ in TASKS} == set(TIMEOUTS)


@pytest.mark.parametrize(("file", "name", "state", "siblings"), TASKS, ids=TASK_IDS)
def test_every_task_retries_lambdas_transient_errors(
    file: str, name: str, state: dict[str, Any], siblings: dict[str, Any]
) -> None:
    # Given: the task's Retry rules
    retried = {error for rule in state.get("Retry", []) for error in rule["ErrorEquals"]}

    # Then: every transient Lambda error is retried (States.ALL retries them all)
    missing = set() if "States.ALL" in retried else TRANSIENT_LAMBDA_ERRORS - retried
    assert not missing, f"{file} {name} does not retry {sorted(missing)}"
    for rule in state.get("Retry", []):
        assert rule.get("MaxAttempts", 3) >= 1, f"{file} {name} has a Retry that never retries"


@pytest.mark.parametrize(("file", "name", "state", "siblings"), TASKS, ids=TASK_IDS)
def test_every_task_catches_every_error_into_a_task_that_records_it(
    file: str, name: str, state: dict[str, Any], siblings: dict[str, Any]
) -> None:
    # Given: the task's Catch of every error
    catches = [rule for rule in state.get("Catch", []) if "States.ALL" in rule["ErrorEquals"]]
    assert catches, f"{file} {name} has no Catch of States.ALL: a failure would end the execution unrecorded"
    [catch] = catches
    target = siblings[catch["Next"]]

    if is_recorder(name):
        # Then: a recording task that fails after its retries ends its branch, keeping the first error
        assert catch.get("ResultPath") not in (None, "$", "$.error"), f"{file} {name} loses the first error"
        return
    # Then: the caught error goes to a recording task that reads it where the Catch put it
    assert is_recorder(catch["Next"]), f"{file} {name} catches into {catch['Next']}, not a Record task"
    assert target["Type"] == "Task"
    parameters = target.get("Parameters") or {}
    read = {value for key, value in parameters.items() if key.endswith(".$")}
    result_path = catch.get("ResultPath", "$")
    assert f"{result_path}.Error" in read, f"{catch['Next']} does not read the error {name} caught"


@pytest.mark.parametrize(("file", "name", "state", "siblings"), TASKS, ids=TASK_IDS)
def test_every_task_has_a_timeout_within_its_functions_timeout(
    file: str, name: str, state: dict[str, Any], siblings: dict[str, Any]
) -> None:
    # Given: the function the task invokes, and its Timeout in the template
    placeholder = state["Resource"].removeprefix("${").removesuffix("}")
    function_timeout = TIMEOUTS[file][placeholder]

    # Then: the task gives up no later than Lambda stops the function
    seconds = state.get("TimeoutSeconds")
    assert isinstance(seconds, int), f"{file} {name} has no TimeoutSeconds: a hung invocation would hang it"
    assert 0 < seconds <= function_timeout, (
        f"{file} {name}: TimeoutSeconds {seconds} against the function's Timeout {function_timeout}"
    )


def test_a_task_without_a_catch_is_reported() -> None:
    # Given: a task that retries and has a timeout but catches nothing
    state = {
        "Type": "Task",
        "Resource": "${F}",
        "TimeoutSeconds": 10,
        "Retry": [{"ErrorEquals": sorted(TRANSIENT_LAMBDA_ERRORS)}],
    }

    # When / Then: the rule fails on it
    with pytest.raises(AssertionError, match=r"no Catch of States\.ALL"):
        test_every_task_catches_every_error_into_a_task_that_records_it("x.asl.json", "Step", state, {})
