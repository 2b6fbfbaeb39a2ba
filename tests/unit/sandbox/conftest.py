"""Fixtures for the sandbox's unit tests: an in-process Flask client over a fresh sandbox state."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from platform_sandbox import SandboxConfig, SandboxState, create_app
from tests.unit.sandbox.samples import ACCOUNT


@pytest.fixture
def config() -> SandboxConfig:
    return SandboxConfig()


@pytest.fixture
def state(config: SandboxConfig) -> SandboxState:
    return SandboxState(config)


@pytest.fixture
def client(state: SandboxState) -> FlaskClient:
    return create_app(state).test_client()


@pytest.fixture
def use_scenario(client: FlaskClient) -> Callable[[str], None]:
    def load(name: str) -> None:
        assert client.post("/_admin/scenario", json={"name": name}).status_code == 200

    return load


@pytest.fixture
def token(client: FlaskClient) -> str:
    """A valid user token of the scenario's marketer with ads_management, ads_read, business_management."""
    response = client.post("/_admin/tokens", json={})
    value: str = response.get_json()["access_token"]
    return value


@pytest.fixture
def graph(client: FlaskClient) -> Callable[..., TestResponse]:
    """Call a Graph path (``/v25.0`` is prefixed) as the marketer with a Bearer token.

    The token is minted per call, so a test may load a scenario (which forgets tokens) first.
    """

    def call(method: str, path: str, **kwargs: Any) -> TestResponse:
        token = client.post("/_admin/tokens", json={}).get_json()["access_token"]
        headers = {"Authorization": f"Bearer {token}", **kwargs.pop("headers", {})}
        return client.open(f"/v25.0{path}", method=method, headers=headers, **kwargs)

    return call


@pytest.fixture
def new_audience(graph: Callable[..., TestResponse]) -> Callable[..., str]:
    """Create a customer-list audience in the business account and return its id."""

    def create(name: str = "Predicted buyers") -> str:
        response = graph(
            "POST",
            f"/{ACCOUNT}/customaudiences",
            data={"name": name, "subtype": "CUSTOM", "customer_file_source": "USER_PROVIDED_ONLY"},
        )
        assert response.status_code == 200, response.get_json()
        audience_id: str = response.get_json()["id"]
        return audience_id

    return create


@pytest.fixture
def upload(graph: Callable[..., TestResponse]) -> Callable[..., TestResponse]:
    """POST rows to ``/<audience>/users`` (or another edge) as a JSON body."""

    def send(
        audience_id: str,
        rows: list[Any],
        *,
        schema: Any = "EMAIL_SHA256",
        session: Any = None,
        edge: str = "users",
        method: str = "POST",
    ) -> TestResponse:
        body: dict[str, Any] = {"payload": {"schema": schema, "data": rows}}
        if session is not None:
            body["session"] = session
        return graph(method, f"/{audience_id}/{edge}", json=body)

    return send
