"""What cfn-lint and `sam validate` do not check: that everything the template names exists."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest

from local.template import ROOT, functions, load_template, resources_of_type, routes
from shared.settings import Settings

TEMPLATE = load_template()
FUNCTIONS = functions(TEMPLATE)
# Variables read by Powertools itself rather than by shared.settings.
POWERTOOLS_VARS = {
    "POWERTOOLS_SERVICE_NAME",
    "POWERTOOLS_METRICS_NAMESPACE",
    "POWERTOOLS_LOG_LEVEL",
    "POWERTOOLS_TRACER_CAPTURE_RESPONSE",
}


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
    settable = {
        (field.validation_alias if isinstance(field.validation_alias, str) else field_name).upper()
        for field_name, field in Settings.model_fields.items()
    }
    unknown = set(FUNCTIONS[name].environment) - settable - POWERTOOLS_VARS
    assert unknown == set()


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
