"""Time as a collaborator, so tests can pin it."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    """The current time, timezone-aware UTC."""
    return datetime.now(UTC)


def iso(ts: datetime) -> str:
    """ISO 8601 with a ``Z`` suffix, second precision (how every timestamp is stored)."""
    return ts.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
