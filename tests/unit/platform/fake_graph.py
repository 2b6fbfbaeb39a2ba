"""A scripted fake of the Graph API for unit tests: queued replies, recorded requests."""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

import httpx

GRAPH_URL = "https://graph.test"
VERSION = "v25.0"
APP_ID = "1234567890"
APP_SECRET = "app_secret"
ACCESS_TOKEN = "access_token"
# HMAC_SHA256("app_secret", "access_token"), the test vector of docs/platform-notes.md §1.6.
PROOF = "d52ddf968d622d8af8677906b7fbae09ac1f89f7cd5c1584b27544624cc23e5a"


def graph_error(code: int, subcode: int | None = None, **extra: Any) -> dict[str, Any]:
    """A Graph error envelope as the platform sends it."""
    error: dict[str, Any] = {"message": f"(#{code}) Simulated error", "type": "OAuthException", "code": code}
    if subcode is not None:
        error["error_subcode"] = subcode
    return {"error": {**error, **extra}}


def buc_header(pct: float, regain_minutes: int = 0, kind: str = "ads_management") -> dict[str, str]:
    """An ``X-Business-Use-Case-Usage`` header for ad account 42 at ``pct`` percent."""
    entry = {
        "type": kind,
        "call_count": pct,
        "total_cputime": 1,
        "total_time": 1,
        "estimated_time_to_regain_access": regain_minutes,
    }
    return {"X-Business-Use-Case-Usage": json.dumps({"42": [entry]})}


@dataclass
class Reply:
    status: int = 200
    body: Any = None
    text: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    error: type[httpx.TransportError] | None = None


class FakeGraph:
    """Answers queued replies in order and records every request it receives."""

    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.requests: list[httpx.Request] = []

    def reply(
        self,
        body: Any = None,
        *,
        status: int = 200,
        headers: dict[str, str] | None = None,
        text: str | None = None,
    ) -> None:
        self.replies.append(
            Reply(status=status, body={} if body is None else body, text=text, headers=headers or {})
        )

    def fail(self, error: type[httpx.TransportError]) -> None:
        self.replies.append(Reply(error=error))

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        assert self.replies, f"unexpected request {request.method} {request.url}"
        reply = self.replies.popleft()
        if reply.error is not None:
            raise reply.error("simulated network failure", request=request)
        if reply.text is not None:
            return httpx.Response(reply.status, text=reply.text, headers=reply.headers)
        return httpx.Response(reply.status, json=reply.body, headers=reply.headers)

    @property
    def last(self) -> httpx.Request:
        return self.requests[-1]

    def form(self, index: int = -1) -> dict[str, str]:
        """The form body of a recorded request, decoded."""
        return dict(parse_qsl(self.requests[index].content.decode()))

    def json_field(self, name: str, index: int = -1) -> Any:
        """A JSON-encoded form field of a recorded request, decoded."""
        return json.loads(self.form(index)[name])

    def json_body(self, index: int = -1) -> dict[str, Any]:
        """The JSON body of a recorded request (sent as ``application/json``), decoded."""
        request = self.requests[index]
        assert request.headers["Content-Type"] == "application/json"
        body: dict[str, Any] = json.loads(request.content)
        return body

    def query(self, index: int = -1) -> dict[str, str]:
        return dict(self.requests[index].url.params)
