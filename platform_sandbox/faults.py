"""Fault injection: the misbehaviour the Graph API can be made to show. ``sandbox_kit.faults`` queues it
and picks the calls it fires on."""

from __future__ import annotations

import re
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, field_validator


class FaultKind(StrEnum):
    THROTTLE = "throttle"  # a throttling error with usage headers (docs/platform-notes.md §8.2)
    TRANSIENT = "transient"  # HTTP 500, code 2, is_transient true
    DELAY = "delay"  # answer normally after `seconds`
    EXPIRE_TOKEN = "expire_token"  # the caller's token expires now: 190/463 from this call on
    REVOKE_TOKEN = "revoke_token"  # the caller's token is revoked: 190/`subcode` (458, 460, 467)
    ERROR = "error"  # any envelope: `code`, `subcode`, `message`, `http_status`
    # The call runs, then its answer is lost to an error (default HTTP 500, code 2, transient): the
    # ambiguous case a client must resolve by looking before it creates again.
    LOST_ANSWER = "lost_answer"


class FaultSpec(BaseModel):
    """What ``POST /_admin/faults`` accepts. ``path`` is a regex searched in the unversioned path."""

    model_config = ConfigDict(extra="forbid")

    kind: FaultKind
    method: str | None = None
    path: str = ".*"
    count: int = Field(default=1, ge=1)
    # Matching calls to let through before the fault fires (e.g. revoke the token after 2 batches).
    after: int = Field(default=0, ge=0)
    code: int | None = None
    subcode: int | None = None
    message: str | None = None
    http_status: int = 400
    regain_minutes: int = Field(default=1, ge=0)
    seconds: float = Field(default=0.0, ge=0, le=60)

    @field_validator("path")
    @classmethod
    def _compiles(cls, value: str) -> str:
        re.compile(value)
        return value
