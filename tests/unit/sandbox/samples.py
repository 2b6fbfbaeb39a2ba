"""Sample values and small assertions shared by the sandbox tests."""

from __future__ import annotations

import hashlib
from typing import Any

from werkzeug.test import TestResponse

from platform_sandbox.scenarios import BUSINESS_ACCOUNT_ID

ACCOUNT = f"act_{BUSINESS_ACCOUNT_ID}"


def sha256(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


def hashed_emails(count: int, start: int = 0) -> list[str]:
    return [sha256(f"buyer{i}@example.com") for i in range(start, start + count)]


def error_of(response: TestResponse) -> dict[str, Any]:
    """The ``error`` object of a Graph error response (fails the test if there is none)."""
    body = response.get_json()
    assert isinstance(body, dict), body
    assert "error" in body, body
    error: dict[str, Any] = body["error"]
    return error
