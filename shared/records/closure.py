"""An account closure: what the person who asked for it chose, and how far the deletion has come."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

ClosureState = Literal["running", "failed", "completed"]
# The phases in the order they run (``shared.closure.service`` says why this order).
ClosurePhase = Literal["access", "idempotency", "platform", "objects", "keys", "records", "users", "done"]
PHASES: tuple[ClosurePhase, ...] = (
    "access",
    "idempotency",
    "platform",
    "objects",
    "keys",
    "records",
    "users",
    "done",
)


class ClosureRecord(BaseModel):
    """One closure, stored under the user who asked for it (their membership is among the first
    things deleted). ``org_id`` and ``org_name`` are kept only while the work runs: a finished
    closure is a receipt with counts, and nothing that names the organization."""

    closure_id: str
    user_id: str
    org_id: str | None = None
    org_name: str | None = None
    delete_platform_audiences: bool
    state: ClosureState
    phase: ClosurePhase
    # Items, objects or audiences deleted so far, per phase.
    deleted: dict[str, int] = Field(default_factory=dict)
    # Where a phase that pages through a listing resumes (its own format), or None.
    cursor: dict[str, str] | None = None
    # The organization's other members (their ``sub``), disabled in the user pool when their
    # membership went; the ``users`` phase deletes them and the person closing, then empties this.
    pool_users: list[str] = Field(default_factory=list)
    attempt: int = 1
    error: str | None = None
    remedy: str | None = None
    requested_at: datetime
    updated_at: datetime
    finished_at: datetime | None = None
