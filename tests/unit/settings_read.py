"""Which settings each function's code reads, for the template test.

A handler reaches its collaborators through ``shared.wiring`` (directly, or through the route
middleware and the idempotency helper); nothing else in the library builds settings
(``tests/unit/test_wiring.py``). So the settings a function reads are those its handler reads from
``wiring.settings()`` itself, plus those each wiring factory it names reads while building. The
factories are really called, under in-process moto, with settings that note every field read.
"""

from __future__ import annotations

import ast
import json
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

import boto3
from moto import mock_aws
from pydantic_settings import BaseSettings

from local.template import ROOT, FunctionSpec
from shared import wiring
from shared.settings import (
    ActivationSettings,
    AudienceSyncSettings,
    ClosureSettings,
    DashboardSettings,
    DataSourceSettings,
    PaymentsSettings,
    Settings,
    SiteEventsSettings,
    SiteSnippetSettings,
    UserPoolSettings,
)
from tests.unit.deployment import ENVIRONMENT, REGION

SETTINGS_FACTORIES: dict[str, type[BaseSettings]] = {
    "settings": Settings,
    "activation_settings": ActivationSettings,
    "data_source_settings": DataSourceSettings,
    "closure_settings": ClosureSettings,
    "audience_sync_settings": AudienceSyncSettings,
    "user_pool_settings": UserPoolSettings,
    "payments_settings": PaymentsSettings,
    "dashboard_settings": DashboardSettings,
    "site_events_settings": SiteEventsSettings,
    "site_snippet_settings": SiteSnippetSettings,
}
# Field -> environment variable.
VARIABLES: dict[str, str] = {
    name: (field.validation_alias if isinstance(field.validation_alias, str) else name).upper()
    for model in SETTINGS_FACTORIES.values()
    for name, field in model.model_fields.items()
}
# Fields without a default: the deploy-time names.
REQUIRED: frozenset[str] = frozenset(
    name
    for model in SETTINGS_FACTORIES.values()
    for name, field in model.model_fields.items()
    if field.is_required()
)
# Set by the Lambda runtime in every function, not by the template.
RUNTIME_VARIABLES = frozenset({"AWS_REGION"})


def required_by(read: set[str]) -> set[str]:
    """The fields that must be set for a function that reads ``read``: every field without a default
    of each settings model it reads from, since the model is validated whole when it is built."""
    return {
        name
        for model in SETTINGS_FACTORIES.values()
        if read & set(model.model_fields)
        for name, field in model.model_fields.items()
        if field.is_required()
    }


def unset_variables(fields: set[str], environment: Mapping[str, Any]) -> set[str]:
    """The variables of ``fields`` that neither ``environment`` nor the Lambda runtime sets."""
    return {VARIABLES[field] for field in fields} - set(environment) - RUNTIME_VARIABLES


class _Recorder:
    """Settings that add the name of every field read to ``read``."""

    def __init__(self, settings: BaseSettings, read: set[str]) -> None:
        self.__dict__.update(_settings=settings, _read=read)

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(type(self._settings), name, None)
        if isinstance(attribute, property) and attribute.fget is not None:
            return attribute.fget(self)  # a derived value: record the fields it reads
        if name in type(self._settings).model_fields:
            self._read.add(name)
        return getattr(self._settings, name)


def _module_path(module: str) -> Path | None:
    base = ROOT / module.replace(".", "/")
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _shared_imports(tree: ast.AST) -> set[str]:
    modules: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("shared"):
            modules.add(node.module)
            modules.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names if alias.name.startswith("shared"))
    return {m for m in modules if m != "shared.wiring" and _module_path(m) is not None}


def _wiring_uses(tree: ast.AST) -> tuple[set[str], set[str]]:
    """The wiring factories ``tree`` names, and the fields it reads from a wiring settings call."""
    factories: set[str] = set()
    fields: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "wiring":
            factories.add(node.attr)
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Attribute)
            and isinstance(node.value.func.value, ast.Name)
            and node.value.func.value.id == "wiring"
            and node.value.func.attr in SETTINGS_FACTORIES
        ):
            fields.add(node.attr)
    return factories, fields


def _uses_of_function(spec: FunctionSpec) -> tuple[set[str], set[str]]:
    """What the handler and every library module it imports (the wiring aside) use of the wiring."""
    module = spec.handler.rpartition(".")[0]
    pending = [spec.code_dir / f"{module}.py"]
    seen: set[Path] = set()
    factories: set[str] = set()
    fields: set[str] = set()
    while pending:
        path = pending.pop()
        if path in seen:
            continue
        seen.add(path)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        named, read = _wiring_uses(tree)
        factories |= named
        fields |= read
        pending.extend(p for m in _shared_imports(tree) if (p := _module_path(m)) is not None)
    return factories, fields


@contextmanager
def _aws() -> Iterator[None]:
    """In-process moto with the platform secret, and the deploy-time environment of the tests."""
    environment = {**ENVIRONMENT, "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test"}
    with mock.patch.dict(os.environ, environment), mock_aws():
        os.environ.pop("AWS_ENDPOINT_URL", None)
        boto3.client("secretsmanager", region_name=REGION).create_secret(
            Name=ENVIRONMENT["PLATFORM_SECRETS_ARN"],
            SecretString=json.dumps({"app_secret": "a", "oauth_state_key": "k"}),
        )
        boto3.client("secretsmanager", region_name=REGION).create_secret(
            Name=ENVIRONMENT["PAYMENTS_SECRETS_ARN"],
            SecretString=json.dumps(
                {"secret_key": "sk_test_x", "webhook_secret": "w", "onboarding_state_key": "k"}
            ),
        )
        try:
            yield
        finally:
            wiring.reset()


def _read_by_factory(name: str) -> set[str]:
    """The fields the wiring factory ``name`` reads while building, with everything it builds on."""
    read: set[str] = set()
    wiring.reset()
    recorders = {
        factory: _Recorder(model(), read)  # type: ignore[call-arg]
        for factory, model in SETTINGS_FACTORIES.items()
    }
    with mock.patch.multiple(wiring, **{factory: lambda r=r: r for factory, r in recorders.items()}):
        getattr(wiring, name)()
    return read


def read_by_function(specs: Mapping[str, FunctionSpec]) -> dict[str, set[str]]:
    """Function logical id -> every settings field its code reads."""
    uses = {name: _uses_of_function(spec) for name, spec in specs.items()}
    needed = set().union(*(factories for factories, _ in uses.values())) - set(SETTINGS_FACTORIES)
    with _aws():
        by_factory = {factory: _read_by_factory(factory) for factory in sorted(needed)}
    return {
        name: fields.union(*(by_factory[f] for f in factories if f in by_factory))
        for name, (factories, fields) in uses.items()
    }
