"""The engine's memory limit: half the function's memory, or the fixed limit a function's
configuration sets (``ENGINE_MEMORY_MB``, the activation step's), which a larger function does not raise."""

from __future__ import annotations

from pathlib import Path

import pytest

from local.template import load_template
from shared.dataplane.engine import ENGINE_MEMORY_VARIABLE, settings_for


def test_the_engine_takes_half_the_functions_memory_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ENGINE_MEMORY_VARIABLE, raising=False)
    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "2048")

    assert settings_for(tmp_path).memory_limit_mb == 1024


def test_a_fixed_limit_holds_whatever_the_functions_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENGINE_MEMORY_VARIABLE, "512")
    limits = []
    for memory in ("1152", "1344", "3008"):
        monkeypatch.setenv("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", memory)
        limits.append(settings_for(tmp_path).memory_limit_mb)

    assert limits == [512, 512, 512]


def test_a_caller_that_names_the_functions_memory_gets_its_share(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENGINE_MEMORY_VARIABLE, "512")

    assert settings_for(tmp_path, function_mb=3008).memory_limit_mb == 1504


def test_the_activation_steps_engine_limit_leaves_python_room_in_its_function() -> None:
    # The activation step's tasks peak at the engine's limit plus Python's arrays (docs/scaling.md):
    # its limit is fixed, below half its memory.
    properties = load_template()["Resources"]["ActivationStepFunction"]["Properties"]
    limit = int(properties["Environment"]["Variables"][ENGINE_MEMORY_VARIABLE])

    assert limit <= int(properties["MemorySize"]) // 2
