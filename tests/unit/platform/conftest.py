"""Fixtures for the platform client tests: a fake Graph API behind ``httpx.MockTransport``."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest

from shared.platform.client import GraphClient
from tests.unit.platform.fake_graph import (
    ACCESS_TOKEN,
    APP_ID,
    APP_SECRET,
    GRAPH_URL,
    VERSION,
    FakeGraph,
)

NOW = datetime(2026, 9, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def fake_graph() -> FakeGraph:
    return FakeGraph()


@pytest.fixture
def sleeps() -> list[float]:
    """Every wait the client asked for, in order (the client never really sleeps in tests)."""
    return []


@pytest.fixture
def client(fake_graph: FakeGraph, sleeps: list[float]) -> GraphClient:
    return GraphClient(
        base_url=GRAPH_URL,
        version=VERSION,
        app_id=APP_ID,
        app_secret=APP_SECRET,
        access_token=ACCESS_TOKEN,
        max_retries=3,
        backoff_base_seconds=1.0,
        transport=httpx.MockTransport(fake_graph),
        sleep=sleeps.append,
        jitter=lambda: 0.0,
        clock=lambda: NOW,
    )
