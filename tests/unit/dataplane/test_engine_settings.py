"""The engine's memory limit: half the function's memory, or the fixed limit a caller passes (the
activation step's and the sync job's, ``ENGINE_MEMORY_MB`` in their configuration, a setting the wiring
reads), which a larger function does not raise."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest
from moto import mock_aws

from local.template import load_template
from shared import wiring
from shared.dataplane import engine
from shared.dataplane.engine import settings_for
from tests.unit.deployment import ENVIRONMENT

VARIABLE = "ENGINE_MEMORY_MB"


def test_the_engine_takes_half_the_functions_memory_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "2048")

    assert settings_for(tmp_path).memory_limit_mb == 1024


def test_a_fixed_limit_holds_whatever_the_functions_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    limits = []
    for memory in ("1152", "1344", "3008"):
        monkeypatch.setenv("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", memory)
        limits.append(settings_for(tmp_path, memory_limit_mb=512).memory_limit_mb)

    assert limits == [512, 512, 512]


def test_a_caller_that_names_the_functions_memory_gets_its_share(tmp_path: Path) -> None:
    assert settings_for(tmp_path, function_mb=3008).memory_limit_mb == 1504


def test_the_engine_reads_no_configuration_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given the fixed limit's variable in the environment (the wiring reads it, as a setting)
    monkeypatch.setenv(VARIABLE, "512")
    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "2048")

    # Then an engine not given the limit takes its share of Lambda's memory
    assert settings_for(tmp_path).memory_limit_mb == 1024


@pytest.fixture
def deployed(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The deploy-time environment, in-process moto holding the platform's secret (the audience
    service's connections read it when built)."""
    for name, value in {**ENVIRONMENT, "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test"}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    with mock_aws():
        secrets = boto3.client("secretsmanager", region_name=ENVIRONMENT["AWS_REGION"])
        secrets.create_secret(
            Name=ENVIRONMENT["PLATFORM_SECRETS_ARN"],
            SecretString='{"app_secret": "a", "oauth_state_key": "k"}',
        )
        yield
    wiring.reset()


def _activation_engine_limit() -> str:
    """The memory limit of the engine the activation steps open, as the engine reports it."""
    wiring.reset()
    with wiring.audience_service().pipeline.open_engine() as runner:
        (limit,) = runner.workspace.connection.execute(
            "SELECT current_setting('memory_limit')"
        ).fetchone() or ("",)
    return str(limit)


@pytest.mark.usefixtures("deployed")
def test_the_activation_steps_engine_is_given_the_fixed_limit_of_its_configuration(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given the activation step's function, with the memory and the fixed engine limit the template sets
    variables = load_template()["Resources"]["ActivationStepFunction"]["Properties"]["Environment"][
        "Variables"
    ]
    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "3008")

    # When its steps open the engine, with the variable and without it
    monkeypatch.setenv(VARIABLE, variables[VARIABLE])
    fixed = _activation_engine_limit()
    monkeypatch.delenv(VARIABLE)
    share = _activation_engine_limit()

    # Then the engine has the fixed limit (as an engine opened with it directly), not half the memory
    with engine.session(memory_limit_mb=int(variables[VARIABLE])) as workspace:
        (expected,) = workspace.connection.execute("SELECT current_setting('memory_limit')").fetchone() or (
            "",
        )
    assert fixed == str(expected)
    assert fixed != share


@pytest.mark.usefixtures("deployed")
def test_the_sync_jobs_engine_is_given_the_fixed_limit_of_its_configuration(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given the sync job's function, with the fixed engine limit the template sets
    variables = load_template()["Resources"]["DataSourceSyncJobFunction"]["Properties"]["Environment"][
        "Variables"
    ]
    monkeypatch.setenv(VARIABLE, variables[VARIABLE])
    wiring.reset()

    # Then the service the job runs the sync with opens its engine with that limit
    assert wiring.data_source_sync().engine_memory_mb == int(variables[VARIABLE])
    # And the service the other functions build (uploads, view, search, retrain), which open no
    # engine, does not read it
    assert wiring.data_source_service().engine_memory_mb is None


@pytest.mark.parametrize("function", ["ActivationStepFunction", "DataSourceSyncJobFunction"])
def test_a_fixed_engine_limit_leaves_python_room_in_its_function(function: str) -> None:
    # The activation step's tasks and the sync job peak at the engine's limit plus Python's arrays
    # (docs/scaling.md): their limit is fixed, below half their memory.
    properties = load_template()["Resources"][function]["Properties"]
    limit = int(properties["Environment"]["Variables"][VARIABLE])

    assert limit <= int(properties["MemorySize"]) // 2
