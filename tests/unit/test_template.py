"""What cfn-lint and `sam validate` do not check: that everything the template names exists."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest

from local.template import ROOT, FunctionSpec, functions, load_template, resources_of_type, routes
from tests.unit.settings_read import VARIABLES, read_by_function, required_by, unset_variables

TEMPLATE = load_template()
FUNCTIONS = functions(TEMPLATE)
# Variables read by Powertools itself rather than by shared.settings.
POWERTOOLS_VARS = {
    "POWERTOOLS_SERVICE_NAME",
    "POWERTOOLS_METRICS_NAMESPACE",
    "POWERTOOLS_LOG_LEVEL",
    "POWERTOOLS_TRACER_CAPTURE_RESPONSE",
}
# Read by libraries, not by our settings: pydantic (no plugin scan on a cold start).
LIBRARY_VARS = {"PYDANTIC_DISABLE_PLUGINS"}


@pytest.fixture(scope="module")
def settings_read() -> dict[str, set[str]]:
    """The settings fields each function's code reads (through the wiring)."""
    return read_by_function(FUNCTIONS)


def _own_variables(spec: FunctionSpec) -> set[str]:
    shared = TEMPLATE.get("Globals", {}).get("Function", {}).get("Environment", {}).get("Variables", {})
    return set(spec.environment) - set(shared)


def intrinsic_targets(value: Any) -> set[str]:
    """Every logical id or parameter named by Ref, GetAtt or Sub inside ``value``."""
    found: set[str] = set()
    if isinstance(value, dict):
        for key, arg in value.items():
            if key == "Ref":
                found.add(arg)
            elif key == "Fn::GetAtt":
                found.add(arg[0] if isinstance(arg, list) else arg.split(".")[0])
            elif key == "Fn::Sub":
                text = arg if isinstance(arg, str) else arg[0]
                found |= {m.split(".")[0] for m in re.findall(r"\$\{([^}!]+)\}", text)}
            found |= intrinsic_targets(arg)
    elif isinstance(value, list):
        for item in value:
            found |= intrinsic_targets(item)
    return found


def test_every_reference_in_the_template_resolves() -> None:
    known = set(TEMPLATE["Resources"]) | set(TEMPLATE.get("Parameters", {}))
    dangling = {t for t in intrinsic_targets(TEMPLATE) if not t.startswith("AWS::")} - known
    assert dangling == set()


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_every_function_handler_file_and_entry_point_exist(name: str) -> None:
    # Given
    spec = FUNCTIONS[name]
    module, _, attr = spec.handler.rpartition(".")
    path = spec.code_dir / f"{module}.py"
    # Then
    assert path.is_file(), f"{name}: {path} missing"
    tree = ast.parse(path.read_text())
    defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)} | {
        target.id
        for n in tree.body
        if isinstance(n, ast.Assign)
        for target in n.targets
        if isinstance(target, ast.Name)
    }
    assert attr in defined, f"{name}: {path} defines no {attr}()"


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_every_function_environment_variable_is_a_setting_or_powertools(name: str) -> None:
    unknown = set(FUNCTIONS[name].environment) - set(VARIABLES.values()) - POWERTOOLS_VARS - LIBRARY_VARS
    assert unknown == set()


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_every_setting_a_function_needs_is_set_by_the_template_for_that_function(
    name: str, settings_read: dict[str, set[str]]
) -> None:
    # Given the settings without a default of every settings model the function's code reads from
    needed = required_by(settings_read[name])

    # When they are looked up in the function's environment in the template
    missing = unset_variables(needed, FUNCTIONS[name].environment)

    # Then every one is set there (or by the Lambda runtime)
    assert missing == set()


@pytest.mark.parametrize("name", sorted(n for n, spec in FUNCTIONS.items() if _own_variables(spec)))
def test_every_variable_a_function_gets_of_its_own_is_read_by_it(
    name: str, settings_read: dict[str, set[str]]
) -> None:
    # Given the variables the template sets for this function only (beyond the global ones)
    own = _own_variables(FUNCTIONS[name])

    # Then its code reads each of them
    assert own - {VARIABLES[field] for field in settings_read[name]} == set()


def test_a_setting_missing_from_a_functions_environment_is_reported(
    settings_read: dict[str, set[str]],
) -> None:
    # Given the function that starts activations, and a template that forgot the state machine for it
    spec = FUNCTIONS["StartActivationFunction"]
    environment = {k: v for k, v in spec.environment.items() if k != "ACTIVATION_STATE_MACHINE_ARN"}

    # When its settings are looked up there
    missing = unset_variables(required_by(settings_read["StartActivationFunction"]), environment)

    # Then the missing variable is named
    assert missing == {"ACTIVATION_STATE_MACHINE_ARN"}


def test_what_functions_read_is_found(settings_read: dict[str, set[str]]) -> None:
    # The recording sees through the wiring: predict reads its tables and the artifacts bucket,
    # and only the functions that start activations (the synchronous create hands long jobs over; the
    # stranded-upload sweeper resumes) read the state machine's ARN.
    assert {"main_table", "usage_table", "artifacts_bucket", "kms_key_id"} <= settings_read["PredictFunction"]
    readers = {name for name, read in settings_read.items() if "activation_state_machine_arn" in read}
    assert readers == {
        "StartActivationFunction",
        "CreateAudienceFunction",
        "RetryActivationFunction",
        "SweepStrandedUploadsFunction",
    }


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_every_function_logs_to_its_own_group_with_retention(name: str) -> None:
    props = TEMPLATE["Resources"][name]["Properties"]
    group = props["LoggingConfig"]["LogGroup"]["Ref"]
    assert TEMPLATE["Resources"][group]["Type"] == "AWS::Logs::LogGroup"
    assert "RetentionInDays" in TEMPLATE["Resources"][group]["Properties"]


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_every_function_has_least_privilege_policies(name: str) -> None:
    text = repr(TEMPLATE["Resources"][name]["Properties"].get("Policies", []))
    assert "AdministratorAccess" not in text
    assert "'Action': '*'" not in text


def test_every_layer_has_its_content_directory() -> None:
    for name, layer in resources_of_type(TEMPLATE, "AWS::Serverless::LayerVersion").items():
        content = ROOT / layer["Properties"]["ContentUri"]
        assert content.is_dir(), f"{name}: {content} missing"
        assert (content / "requirements.txt").is_file() or (content / "README.md").is_file()


def test_every_state_machine_definition_exists() -> None:
    for name, machine in resources_of_type(TEMPLATE, "AWS::Serverless::StateMachine").items():
        definition = ROOT / machine["Properties"]["DefinitionUri"]
        assert definition.is_file(), f"{name}: {definition} missing"


def test_routes_are_unique() -> None:
    keys = [(r.method, r.path) for r in routes(TEMPLATE)]
    assert len(keys) == len(set(keys))


def test_every_event_file_names_a_function() -> None:
    for event in (ROOT / "events").glob("*.json"):
        assert any(event.stem == Path(s.code_dir).name for s in FUNCTIONS.values()), event.name


def test_every_function_has_a_sample_event() -> None:
    for spec in FUNCTIONS.values():
        assert (ROOT / "events" / f"{spec.code_dir.name}.json").is_file(), spec.logical_id


def test_only_administrators_create_dashboard_users() -> None:
    # Given the user pool that issues the dashboard's JWTs
    (pool,) = resources_of_type(TEMPLATE, "AWS::Cognito::UserPool").values()

    # Then nobody can sign themselves up: an operator (or an invitation) creates every user
    assert pool["Properties"]["AdminCreateUserConfig"]["AllowAdminCreateUserOnly"] is True
