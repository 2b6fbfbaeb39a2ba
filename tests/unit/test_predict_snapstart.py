"""The predict function's SnapStart hooks (``functions/predict/handler.py``), run as the runtime runs
them: before the snapshot the predictor is built and the configured models loaded; after a restore
everything holding credentials or connections is new and the loaded bundles are kept."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from types import ModuleType
from unittest import mock

import pytest

from local.template import ROOT
from shared import wiring
from tests.unit.deployment import ENVIRONMENT


@pytest.fixture
def handler() -> Iterator[ModuleType]:
    environment = {**ENVIRONMENT, "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test"}
    with mock.patch.dict(os.environ, environment):
        os.environ.pop("AWS_ENDPOINT_URL", None)
        wiring.reset()
        spec = importlib.util.spec_from_file_location(
            "predict_handler", ROOT / "functions/predict/handler.py"
        )
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        yield module
        wiring.reset()


def test_after_a_restore_the_clients_are_new_and_the_bundles_kept(handler: ModuleType) -> None:
    # Given what the snapshot holds: a built predictor (no warm models configured)
    handler.before_snapshot()
    predictor, bundles, session = wiring.predictor(), wiring.bundle_cache(), wiring.aws_session()
    # When the runtime restores the snapshot
    handler.after_restore()
    # Then
    assert wiring.bundle_cache() is bundles
    assert wiring.predictor() is not predictor
    assert wiring.predictor().bundles is bundles
    assert wiring.aws_session() is not session
    assert wiring.dynamodb_client() is not predictor.meter._client  # type: ignore[attr-defined]
