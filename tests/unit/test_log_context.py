"""Log lines carry the current caller only: keys appended during one invocation (the organization,
the API key prefix) are gone in the next one that runs in the same container."""

from __future__ import annotations

import io
import json
import logging
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from local.runner import LambdaContext
from shared.api import create_app, http_entry_point
from shared.observability import logger
from tests.http_events import http_event


def container() -> Any:
    """One function's entry point, as a warm container serves request after request."""
    app = create_app()

    @app.get("/whoami/<org_id>")
    def identified(org_id: str) -> dict[str, str]:
        logger.append_keys(org_id=org_id, api_key_prefix="sk_live_abcd")  # as the middlewares do
        logger.info("identified request")
        return {"orgId": org_id}

    @app.get("/anonymous")
    def anonymous() -> dict[str, str]:
        logger.info("anonymous request")
        return {}

    return http_entry_point(app)


def invoke(handler: Any, path: str, route_path: str | None = None, **params: str) -> None:
    event = http_event("GET", path, route_path, path_params=params)
    handler(event, LambdaContext("TestFunction", 512, str(uuid.uuid4()), int(time.time() * 1000) + 10_000))


def logged(output: str, message: str) -> dict[str, Any]:
    lines = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    matching = [line for line in lines if line.get("message") == message]
    assert len(matching) == 1, output
    return matching[0]


@pytest.fixture
def log_lines() -> Iterator[io.StringIO]:
    """What the service logger writes, formatted as in Lambda (one JSON object a line)."""
    level = logger.log_level
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logger.registered_formatter)
    logger.addHandler(handler)
    logger.setLevel("INFO")
    yield stream
    logger.removeHandler(handler)
    logger.setLevel(level)


def read(stream: io.StringIO) -> str:
    text = stream.getvalue()
    stream.seek(0)
    stream.truncate()
    return text


def test_a_request_is_not_logged_with_the_previous_callers_organization(
    log_lines: io.StringIO,
) -> None:
    # Given a container that served organization B's request
    handler = container()
    invoke(handler, "/whoami/org-b", "/whoami/{org_id}", org_id="org-b")
    assert logged(read(log_lines), "identified request")["org_id"] == "org-b"

    # When an unauthenticated request comes next
    invoke(handler, "/anonymous")

    # Then its log line carries neither B's organization nor B's key prefix, but its own request id
    line = logged(read(log_lines), "anonymous request")
    assert "org_id" not in line
    assert "api_key_prefix" not in line
    assert line["correlation_id"]
