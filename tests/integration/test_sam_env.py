"""The env-vars file ``make dev`` writes for ``sam local invoke`` points every function at this
running local stack (issue 24, item 7; SAM CLI's own reading of it is tests/unit/test_sam_env.py)."""

from __future__ import annotations

import json
from pathlib import Path

from local.sam_env import write_sam_env
from local.stack import LocalStack
from local.template import functions, load_template
from tests.unit.settings_read import VARIABLES
from tests.unit.test_sam_env import LOCAL_ONLY_VARIABLES

FUNCTIONS = functions(load_template())
# Set by the local stack for its own processes only: sam local has no X-Ray daemon (tracing is off
# under AWS_SAM_LOCAL) and prints the metrics it would send; SAM CLI sets the region itself (--region).
IN_PROCESS_ONLY = {"POWERTOOLS_TRACE_DISABLED", "POWERTOOLS_METRICS_DISABLED", "AWS_REGION"}


def test_the_file_points_every_function_at_this_stack(stack: LocalStack, tmp_path: Path) -> None:
    # When: the file is written for this stack, as make dev writes it
    path = tmp_path / "sam-env.json"
    write_sam_env(path, FUNCTIONS, {**stack.env, "AWS_ENDPOINT_URL": stack.moto_url})
    entries = json.loads(path.read_text())

    # Then: every function talks to this stack's moto, sandbox and user pool, with its resources
    assert set(entries) == set(FUNCTIONS)
    assert {entry["AWS_ENDPOINT_URL"] for entry in entries.values()} == {stack.moto_url}
    assert {entry["PLATFORM_GRAPH_URL"] for entry in entries.values()} == {stack.sandbox.url}
    assert {entry["JWKS_URL"] for entry in entries.values()} == {stack.env["JWKS_URL"]}
    assert {entry["PAYMENTS_API_URL"] for entry in entries.values()} == {stack.payments.url}
    assert {entry["MAIN_TABLE"] for entry in entries.values()} == {stack.physical["MainTable"].ref}
    assert entries["StartActivationFunction"]["ACTIVATION_STATE_MACHINE_ARN"].startswith("arn:aws:states:")


def test_every_variable_the_local_stack_sets_is_one_sam_local_would_pass_on() -> None:
    # Given: what the template declares for any function (SAM CLI overrides only those)
    declared = {name for spec in FUNCTIONS.values() for name in spec.environment}

    # Then: the local-only variables the unit test checks are declared, so sam local passes them on
    assert declared >= LOCAL_ONLY_VARIABLES


def test_the_running_stack_sets_no_setting_sam_local_would_drop(stack: LocalStack) -> None:
    # Given: every setting of the service the running stack gives its functions (but the tests' own
    # tuning)
    given = (set(stack.env) - set(stack.extra_env) - IN_PROCESS_ONLY) & set(VARIABLES.values())

    # Then: each is declared in the template, so the env-vars file can give it under sam local
    declared = {name for spec in FUNCTIONS.values() for name in spec.environment}
    assert given - declared == set()
