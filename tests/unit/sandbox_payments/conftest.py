"""Fixtures for the payments sandbox's unit tests."""

from __future__ import annotations

import pytest

from tests.unit.sandbox_payments.harness import Harness


@pytest.fixture
def sandbox() -> Harness:
    return Harness()
