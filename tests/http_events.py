"""Payload-2.0 events for tests that call a resolver directly, built by the local gateway's code."""

from __future__ import annotations

import json
from typing import Any

from werkzeug.test import EnvironBuilder
from werkzeug.wrappers import Request

from local.gateway import build_event
from local.template import Route


def http_event(
    method: str,
    path: str,
    route_path: str | None = None,
    *,
    body: Any = None,
    headers: dict[str, str] | None = None,
    path_params: dict[str, str] | None = None,
    content_type: str = "application/json",
) -> dict[str, Any]:
    """The event API Gateway would send for this request (the body sent as ``content_type``)."""
    data = body if isinstance(body, str | bytes) or body is None else json.dumps(body)
    builder = EnvironBuilder(
        method=method,
        path=path,
        data=data,
        headers=list((headers or {}).items()),
        content_type=content_type,
    )
    request = Request(builder.get_environ())
    return build_event(request, Route(method, route_path or path, "Test"), path_params or {}, "testapi")
