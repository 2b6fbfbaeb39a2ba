"""Per-organization limits on the expensive dashboard actions (issue 25, item 4, "Fair shares").

A targeting preview scores every user of a model, a retrain syncs the data again and trains both
models, an activation hashes and uploads a whole audience: a burst of them by one organization took
the machine another organization's predictions ran on (its predict median went from 16 ms to
381 ms). Each organization may start at most ``per_window`` of each action in a fixed window of
``window_seconds``; past it the action answers 429 with ``Retry-After`` (the seconds left in the
window) and a message that says what was limited and when to try again.

The count is one conditional write per request (``ActionCounts.spend``), kept in DynamoDB so every
container of every function sees the same count. A refused request is not counted. A window only
fills: once a container has been refused a window, it refuses that organization's action until the
window ends without asking again, so a flood of refused requests costs no write.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal, Protocol

from shared.errors import QuotaExceeded

LimitedAction = Literal["targeting_preview", "retrain", "activation"]

# What each action is called on the dashboard, in the message a marketer reads.
_WORDS: dict[LimitedAction, tuple[str, str]] = {
    "targeting_preview": ("targeting preview", "targeting previews"),
    "retrain": ("retrain", "retrains"),
    "activation": ("audience activation", "audience activations"),
}


@dataclass(frozen=True)
class ActionLimit:
    """At most ``per_window`` starts of the action per organization in each window of
    ``window_seconds`` (windows are aligned on the epoch: 10:00-11:00, 11:00-12:00, ...)."""

    per_window: int
    window_seconds: int


class ActionCounts(Protocol):
    """Where each organization's starts of each action are counted (``DynamoActionCounts``)."""

    def spend(self, org_id: str, action: str, window: int, limit: int, expires_at: int) -> bool:
        """Count one start of ``action`` by ``org_id`` in ``window`` if fewer than ``limit`` are
        counted there; False (nothing counted) when the window is full. ``expires_at`` (epoch
        seconds) is when the count may be forgotten."""
        ...


class ActionLimited(QuotaExceeded):
    """The organization started its limit of an action in the current window (429, Retry-After)."""

    code = "action_limited"

    def __init__(self, message: str, *, remedy: str, retry_after_seconds: float, details: dict[str, object]):
        super().__init__(message, remedy=remedy, details=details, retry_after_seconds=retry_after_seconds)


def _duration(seconds: int) -> str:
    if seconds % 3600 == 0:
        hours = seconds // 3600
        return "hour" if hours == 1 else f"{hours} hours"
    if seconds % 60 == 0:
        minutes = seconds // 60
        return "minute" if minutes == 1 else f"{minutes} minutes"
    return f"{seconds} seconds"


def _wait(seconds: int) -> str:
    if seconds < 120:
        return f"{seconds} second" + ("" if seconds == 1 else "s")
    minutes = math.ceil(seconds / 60)
    return f"{minutes} minutes"


@dataclass
class OrgActionLimits:
    """Holds each organization to its limit of each expensive action."""

    counts: ActionCounts
    limits: dict[LimitedAction, ActionLimit]
    clock: Callable[[], datetime]
    # (organization, action) -> the window this container knows is full.
    _full: dict[tuple[str, str], int] = field(default_factory=dict)

    def spend(self, org_id: str, action: LimitedAction) -> None:
        """Count one start of ``action`` by ``org_id``; raises ``ActionLimited`` (nothing counted)
        when the organization already started its limit of it in the current window, with the
        seconds until the window ends (without a write when this container was already refused it)."""
        limit = self.limits[action]
        now = self.clock().timestamp()
        window = int(now // limit.window_seconds)
        window_ends = (window + 1) * limit.window_seconds
        # Kept one more window after its own, then DynamoDB's TTL removes it.
        known_full = self._full.get((org_id, action)) == window
        if not known_full:
            if self.counts.spend(
                org_id, action, window, limit.per_window, window_ends + limit.window_seconds
            ):
                return
            if len(self._full) > 10_000:  # a container serving many organizations forgets old windows
                self._full.clear()
            self._full[(org_id, action)] = window
        wait = max(1, math.ceil(window_ends - now))
        one, many = _WORDS[action]
        raise ActionLimited(
            f"Your organization has started {limit.per_window} {many if limit.per_window != 1 else one} "
            f"in the last {_duration(limit.window_seconds)}, the most allowed. "
            f"You can start another {one} in {_wait(wait)}.",
            remedy=f"Wait {_wait(wait)} (Retry-After), then try again. Nothing was started this time. "
            "The limit keeps one organization's bursts from slowing every other organization down.",
            retry_after_seconds=wait,
            details={"action": action, "limit": limit.per_window, "windowSeconds": limit.window_seconds},
        )
