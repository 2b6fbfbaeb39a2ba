"""The scheduled token check: every active connection is validated with ``debug_token`` and its
health recorded, so expiring or revoked tokens surface in the dashboard before a sync fails."""

from __future__ import annotations

from collections import Counter
from typing import Protocol

from pydantic import BaseModel

from shared.connections.lifecycle import ConnectionService
from shared.observability import logger
from shared.platform.errors import PlatformError
from shared.records.connections import Connection


class ActiveConnections(Protocol):
    def active(self) -> list[Connection]: ...


class ValidationSummary(BaseModel):
    checked: int
    valid: int = 0
    expiring: int = 0
    invalid: int = 0
    failed: int = 0


def validate_active_connections(service: ConnectionService, store: ActiveConnections) -> ValidationSummary:
    """Check every active connection; one failing check never stops the others."""
    counts: Counter[str] = Counter()
    connections = store.active()
    for connection in connections:
        try:
            checked = service.validate(connection)
            counts[checked.token_health] += 1
        except PlatformError as exc:
            # The platform could not answer now (throttled, down): keep the last result, retry next run.
            counts["failed"] += 1
            logger.warning("token check failed", extra={"org_id": connection.org_id, "error_code": exc.code})
    summary = ValidationSummary(
        checked=len(connections),
        valid=counts["valid"],
        expiring=counts["expiring"],
        invalid=counts["invalid"],
        failed=counts["failed"],
    )
    logger.info("token validation finished", extra=summary.model_dump())
    return summary
