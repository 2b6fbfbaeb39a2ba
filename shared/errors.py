"""Domain errors. The library raises these; ``shared.api`` maps them to HTTP in one place.

Each error carries a stable machine ``code``, a message a person can act on, and optionally the
``field`` at fault and a ``remedy`` (what to do next). No stack trace or AWS error code reaches a client.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, ClassVar


class ServiceError(Exception):
    """Base of every error the service reports to a caller."""

    status: ClassVar[int] = 500
    code: ClassVar[str] = "internal_error"
    # When to try again, in seconds (sent as the Retry-After header); None when it is no use.
    retry_after_seconds: float | None = None
    # Headers the error response carries besides Retry-After (a spent quota's usage header).
    headers: Mapping[str, str] = MappingProxyType({})

    def __init__(
        self,
        message: str,
        *,
        field: str | None = None,
        remedy: str | None = None,
        details: dict[str, Any] | None = None,
        action: str | None = None,
        retry_after_seconds: float | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        self.remedy = remedy
        self.details = details or {}
        # The remedy as an action a client can offer to do (``ErrorDetail.action`` lists them).
        self.action = action
        # Left out, each keeps its class's default (a 503's Retry-After of 5 s, no extra headers).
        if retry_after_seconds is not None:
            self.retry_after_seconds = retry_after_seconds
        if headers is not None:
            self.headers = MappingProxyType(dict(headers))


class ValidationFailed(ServiceError):
    status = 400
    code = "validation_error"


class Unauthorized(ServiceError):
    status = 401
    code = "unauthorized"


class Forbidden(ServiceError):
    status = 403
    code = "forbidden"


class AccountClosed(Forbidden):
    """The caller's organization was closed: its data is deleted and its users can no longer sign in."""

    code = "account_closed"


class NotFound(ServiceError):
    status = 404
    code = "not_found"


class Conflict(ServiceError):
    status = 409
    code = "conflict"


class RecordChanged(Conflict):
    """Another writer stored the record since it was read, and this change could not be applied
    again over theirs safely (or kept meeting new writes)."""

    code = "record_changed"


class RecordGone(Conflict):
    """The record was deleted while the writer worked on it."""

    code = "record_deleted"


class PreconditionFailed(ServiceError):
    """The request is well formed but the account is not in a state that allows it."""

    status = 422
    code = "precondition_failed"


class QuotaExceeded(ServiceError):
    status = 429
    code = "quota_exceeded"


class UpstreamError(ServiceError):
    """The advertising platform (or another dependency) failed; the message says what to do."""

    status = 502
    code = "upstream_error"


class OutOfTime(ServiceError):
    """The invocation's time ran out before a dependency answered (``shared.deadline``): answered
    while the function still can, with when to try again, rather than cut off by Lambda's or API
    Gateway's limit without a body."""

    status = 503
    code = "out_of_time"

    def __init__(
        self,
        message: str,
        *,
        remedy: str | None = None,
        retry_after_seconds: float = 5.0,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message, remedy=remedy, details=details, retry_after_seconds=retry_after_seconds)


class UnsupportedMediaType(ServiceError):
    """The request body is not in a format the route reads (every body is JSON)."""

    status = 415
    code = "unsupported_media_type"


class IdempotencyKeyReused(ServiceError):
    """An ``Idempotency-Key`` already used with another request body (on any route that takes it)."""

    status = 422
    code = "idempotency_key_reused"
