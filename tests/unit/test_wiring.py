"""The wiring registry: every collaborator a container keeps is cached in ``shared.wiring`` and nowhere
else, and ``wiring.reset()`` forgets every one, so no test leaks a client, a store or a secret into the
next."""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from shared import wiring
from tests.unit.deployment import ENVIRONMENT, REGION

ROOT = Path(__file__).resolve().parents[2]
# Arguments for the cached factories that take some (one per argument set is cached).
ARGUMENTS: dict[str, tuple[Any, ...]] = {
    "table": ("service-main",),
    "_payments_provider_for": ("sk_test_key",),
}


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """In-process moto with the platform secret, and settings read afresh."""
    for name, value in {
        **ENVIRONMENT,
        "AWS_ACCESS_KEY_ID": "test",
        "AWS_SECRET_ACCESS_KEY": "test",
        "AWS_DEFAULT_REGION": REGION,
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    with mock_aws():
        secret = boto3.client("secretsmanager", region_name=REGION).create_secret(
            Name="platform", SecretString=json.dumps({"app_secret": "a", "oauth_state_key": "k"})
        )
        monkeypatch.setenv("PLATFORM_SECRETS_ARN", secret["ARN"])
        wiring.reset()
        yield
    wiring.reset()


def _build(factory: Any) -> Any:
    return factory(*ARGUMENTS.get(factory.__name__, ()))


@pytest.mark.usefixtures("aws")
def test_reset_forgets_every_cached_collaborator() -> None:
    # Given every cached collaborator built once, and kept: asking again gives the same object
    factories = wiring.registered()
    built = {factory.__name__: _build(factory) for factory in factories}
    assert {name for name, value in built.items() if _build(getattr(wiring, name)) is not value} == set()

    # When the wiring is reset
    wiring.reset()

    # Then no factory holds anything, and each builds a new object when asked again
    assert {factory.__name__: factory.cache_info().currsize for factory in factories} == dict.fromkeys(
        built, 0
    )
    assert {name for name, value in built.items() if _build(getattr(wiring, name)) is value} == set()


def test_the_registry_holds_the_settings_clients_stores_and_per_container_caches() -> None:
    # Given the registry
    names = {factory.__name__ for factory in wiring.registered()}

    # Then the collaborators a container keeps are among them
    expected = {
        "settings",
        "table",
        "s3_client",
        "kms_client",
        "api_key_store",
        "usage_store",
        "http_client",
        "platform_secrets_source",
        "jwt_verifier",
        "idempotency_store",
        "predictor",
    }
    assert expected - names == set()
    # and the per-request services are not: each request builds them with the current secret
    assert {"connection_service", "audience_service", "publishing_service", "graph_client"} & names == set()


CACHING_DECORATORS = {"cache", "lru_cache", "cached_property"}


def _caches_outside_wiring(root: Path) -> list[str]:
    """``module:line`` of every use of a functools cache in ``shared`` outside ``shared/wiring.py``."""
    found: list[str] = []
    for path in sorted((root / "shared").rglob("*.py")):
        if path.relative_to(root).as_posix() == "shared/wiring.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "functools":
                names = {alias.name for alias in node.names} & CACHING_DECORATORS
            elif isinstance(node, ast.Attribute) and node.attr in CACHING_DECORATORS:
                names = {node.attr}
            else:
                continue
            found.extend(f"{path.relative_to(root)}:{node.lineno} {name}" for name in sorted(names))
    return found


def test_nothing_in_the_library_caches_a_collaborator_outside_the_wiring() -> None:
    # Given the library
    # When every module is searched for a functools cache
    found = _caches_outside_wiring(ROOT)

    # Then only the wiring caches, so reset() reaches every cache
    assert found == []


def test_the_search_finds_a_cache_outside_the_wiring(tmp_path: Path) -> None:
    # Given a library with a cached client in a repository module
    module = tmp_path / "shared" / "repositories" / "clients.py"
    module.parent.mkdir(parents=True)
    module.write_text("import functools\n\n@functools.cache\ndef s3() -> object:\n    return object()\n")

    # When it is searched
    found = _caches_outside_wiring(tmp_path)

    # Then the cache is reported where it is
    assert found == ["shared/repositories/clients.py:3 cache"]


def test_only_the_wiring_builds_settings() -> None:
    # Given the library and the handlers
    paths = [*(ROOT / "shared").rglob("*.py"), *(ROOT / "functions").rglob("*.py")]

    # When every call of a settings class is found
    builders = sorted(
        (path.relative_to(ROOT).as_posix(), node.func.id)
        for path in paths
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in {"Settings", "ActivationSettings", "DataSourceSettings", "ClosureSettings"}
    )

    # Then the wiring is the only place (so the settings a function reads are those it asks the wiring
    # for: tests/unit/settings_read.py)
    assert builders == [
        ("shared/wiring.py", "ActivationSettings"),
        ("shared/wiring.py", "ClosureSettings"),
        ("shared/wiring.py", "DataSourceSettings"),
        ("shared/wiring.py", "Settings"),
    ]
