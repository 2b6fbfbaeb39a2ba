"""An audience deleted on the platform's side (in its ads manager): how the service recognises and
records it, so that the audience is listed as deleted on the platform rather than active, refresh and
sync say why they cannot run, and deleting it in the service still succeeds."""

from __future__ import annotations

from typing import Final

from shared.errors import Conflict
from shared.platform.errors import PlatformError, object_gone
from shared.records.audiences import AudienceRecord, FailureRecord

DELETED_ON_PLATFORM: Final = "deleted_on_platform"
_REMEDY = (
    "Remove it from the list (Delete), or create it again from its snapshot: download its CSV and "
    "create a new audience from that file."
)


def gone_on_platform(error: Exception) -> bool:
    """Whether ``error`` says the audience no longer exists on the platform."""
    return isinstance(error, PlatformError) and object_gone(error)


def mark_deleted_on_platform(record: AudienceRecord) -> None:
    """Record that the platform no longer has the audience: its status and the failure shown with it."""
    record.status = DELETED_ON_PLATFORM
    record.failure = FailureRecord(
        code="platform_audience_deleted",
        message="This audience was deleted on the platform (in its ads manager); nothing can be sent to it.",
        remedy=_REMEDY,
    )


def deleted_on_platform(record: AudienceRecord) -> Conflict:
    """The answer to a refresh or sync of an audience the platform no longer has."""
    return Conflict(
        f"Audience {record.audience_id} was deleted on the platform (in its ads manager), so its members "
        "cannot be replaced.",
        remedy=_REMEDY,
    )
