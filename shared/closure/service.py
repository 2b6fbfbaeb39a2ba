"""Account closure: delete everything an organization has, in the background, resumable.

The person who asks types the organization's name; the closure is then stored under their user
(their membership is among the first things deleted) and a state machine calls ``advance`` until it
is done. Each call does bounded pieces of work and saves the record after each one, so a call cut
short (timeout, crash, a platform failure) loses nothing: the next call, or a resume after a
failure, starts where the saved record says. Every piece is a deletion, so repeating one is harmless.

The phases run in this order, for these reasons:

1. ``access``: the memberships (no one of the organization can add anything after this), pending OAuth
   states (no connection can land) and the site keys (the shop's pages can no longer send events,
   which would write the organization's counts again); the other members are disabled in the user pool
   (they can no longer sign in) and each member gets a closed marker, so a session that outlives the
   organization is told the account was closed; then the card payments stop: the checkouts still open
   are expired at the provider (no shopper can pay one any more), as a disconnect does, and the
   payments account id is destroyed (a disconnect keeps it for a reconnect; the merchant's account
   itself stays theirs, with the provider);
2. ``idempotency``: the stored results of the organization's Idempotency-Keys, found from the
   audiences' keys, so before the audiences go;
3. ``platform`` (only if asked): each audience's advert, then the audience and its lookalike on the
   platform, with the connection's token, so before the connection goes;
4. ``objects``: every S3 object under the organization's prefixes (every version in the artifacts
   bucket);
5. ``keys``: each API key's usage counters, then the key;
6. ``records``: the rest of the organization's partition: the organization itself, models, the
   connection with its encrypted token, audiences, dataset versions, syncs; then one more look
   under the prefixes and for keys, for what a request or job already under way wrote after its
   phase (found: deleted, or back to that phase);
7. ``users``: the members in the user pool, the person closing last of all: they stay able to sign
   in until the end, so a closure that stopped can be resumed by them.

A finished closure keeps a receipt under the user (counts and times, nothing that names the
organization) so the dashboard can show the result; it expires by itself.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal, Protocol

from pydantic import Field

from shared.clock import Clock
from shared.errors import Conflict, Forbidden, PreconditionFailed, ServiceError, ValidationFailed
from shared.observability import logger
from shared.records.audiences import AudienceRecord
from shared.records.closure import PHASES, ClosurePhase, ClosureRecord
from shared.records.connections import Connection
from shared.wire_models import CamelModel

# A running closure whose record has not moved for this long lost its execution: it may be resumed.
STALLED_AFTER = timedelta(minutes=15)

PHASE_LABELS: dict[ClosurePhase, str] = {
    "access": "Members, pending connections, site keys and open checkouts",
    "idempotency": "Stored request results",
    "platform": "Adverts and audiences on the platform",
    "objects": "Files: snapshots, uploads, data sources, datasets and models",
    "keys": "API keys and their usage",
    "records": "Organization, models, connection and token, audiences, datasets",
    "users": "Dashboard users: nobody can sign in to the organization",
    "done": "Done",
}

RESUME_REMEDY = (
    "Resume the closure: what was deleted stays deleted and the rest continues from where it stopped."
)


# --- what the service needs -------------------------------------------------------------------------


class ClosureStore(Protocol):
    def get(self, user_id: str) -> ClosureRecord | None: ...
    def put(self, record: ClosureRecord) -> None: ...


class Organizations(Protocol):
    def name_of(self, org_id: str) -> str | None: ...


class OrganizationItems(Protocol):
    """The organization's items in the tables (``shared.repositories.closure``)."""

    def delete_access(
        self,
        org_id: str,
        cursor: dict[str, str] | None,
        closed_at: datetime,
        before_delete: Callable[[list[str]], None],
    ) -> tuple[int, dict[str, str] | None]: ...
    def delete_idempotency(
        self, org_id: str, keys: Sequence[str], cursor: dict[str, str] | None
    ) -> tuple[int, dict[str, str] | None]: ...
    def api_key_ids(self, org_id: str) -> list[str]: ...
    def delete_key(self, org_id: str, key_id: str) -> int: ...
    def delete_partition(self, org_id: str, limit: int) -> tuple[int, bool]: ...


class UserPool(Protocol):
    """The dashboard's users (``shared.repositories.user_pool``), named by their ``sub``."""

    def disable(self, user_id: str) -> bool: ...
    def delete(self, user_id: str) -> bool: ...


class ObjectEraser(Protocol):
    def delete_prefix(self, prefix: str, limit: int) -> tuple[int, bool]: ...


class AudienceRecords(Protocol):
    def list_for_org(self, org_id: str) -> list[AudienceRecord]: ...


class AudienceDeletion(Protocol):
    """``AudienceService.delete``: on the platform (audience and lookalike), its files, its record."""

    def delete(self, org_id: str, audience_id: str, *, confirm: bool) -> None: ...


class AdvertDeletion(Protocol):
    """``PublishingService.delete_advert``: ad, creative, ad set and campaign on the platform."""

    def delete_advert(self, org_id: str, audience_id: str, *, confirm: bool) -> None: ...


class Connections(Protocol):
    def get(self, org_id: str) -> Connection | None: ...


class Payments(Protocol):
    """``PaymentsConnectionService.stop``: the open checkouts expired at the provider and the account
    id destroyed; False when no payments account was connected."""

    def stop(self, org_id: str) -> bool: ...


@dataclass(frozen=True)
class Platform:
    """What deletes on the platform; built only for a closure that deletes platform audiences (it
    reads the platform secrets)."""

    audiences: AudienceDeletion
    adverts: AdvertDeletion


StartExecution = Callable[[str, dict[str, str]], None]


# --- the wire -----------------------------------------------------------------------------------------


class CloseAccountRequest(CamelModel):
    confirm_name: str = Field(
        min_length=1,
        max_length=256,
        description="The organization's name, typed by the person closing it (surrounding spaces ignored).",
    )
    delete_platform_audiences: bool = Field(
        default=False,
        description="Also delete the organization's audiences (and their adverts) on the platform; "
        "otherwise they stay in the ad account.",
    )


class ClosurePhaseView(CamelModel):
    name: ClosurePhase
    label: str
    state: Literal["pending", "running", "done", "skipped"]
    deleted: int


class ClosureView(CamelModel):
    closure_id: str
    state: Literal["running", "failed", "completed"]
    phase: ClosurePhase
    phases: list[ClosurePhaseView]
    delete_platform_audiences: bool
    attempt: int
    error: str | None = None
    remedy: str | None = None
    requested_at: datetime
    updated_at: datetime
    finished_at: datetime | None = None


class AccountView(CamelModel):
    """``GET /platform-ads/account/closure``: the organization (while there is one) and its closure."""

    organization_name: str | None = Field(description="None once the organization is deleted.")
    closure: ClosureView | None = Field(description="None when no closure was asked for.")


# --- the service --------------------------------------------------------------------------------------


def organization_prefixes(org_id: str) -> list[tuple[str, str]]:
    """Every S3 prefix that holds the organization's objects, as (bucket role, prefix). The writers:
    audience snapshots and sources (``shared.audiences.service``), audience list uploads
    (``shared.audiences.uploads``), activation users and batches (``shared.activation``),
    data source uploads and dataset versions
    (``shared.datasources.service``), model artifacts (``shared.predictions.registry``), the buyers of
    the hosted checkout's orders (``shared.payments.webhooks``)."""
    return [
        ("data", f"snapshots/{org_id}/"),
        ("data", f"sources/{org_id}/"),
        ("data", f"uploads/{org_id}/"),
        ("data", f"activations/{org_id}/"),
        ("data", f"data-sources/{org_id}/"),
        ("data", f"datasets/{org_id}/"),
        ("data", f"checkout-orders/{org_id}/"),
        ("artifacts", f"orgs/{org_id}/"),
    ]


def idempotency_keys(audiences: Sequence[AudienceRecord]) -> list[str]:
    """The Idempotency-Key scopes the organization's requests used: an audience's own key, and an
    advert's ``<audienceId>/<key>`` (``functions/publish_advert``)."""
    keys: list[str] = []
    for audience in audiences:
        if audience.idempotency_key:
            keys.append(audience.idempotency_key)
        if audience.publication is not None and audience.publication.idempotency_key:
            keys.append(f"{audience.audience_id}/{audience.publication.idempotency_key}")
    return keys


@dataclass(frozen=True)
class ClosureService:
    closures: ClosureStore
    organizations: Organizations
    items: OrganizationItems
    objects: dict[str, ObjectEraser]  # bucket role ("data", "artifacts") -> its eraser
    audiences: AudienceRecords
    connections: Connections
    platform: Callable[[], Platform]
    users: Callable[[], UserPool]  # built only by the step that uses it (it knows the pool)
    payments: Callable[[], Payments]  # built only by the step (it reads the provider's key)
    clock: Clock
    # Objects or items per piece of work: small enough to save progress often.
    batch: int = 500

    # --- asking and looking ------------------------------------------------------------------------

    def view(self, user_id: str, org_id: str | None) -> AccountView:
        record = self.closures.get(user_id)
        if record is not None and record.state == "completed" and org_id is not None:
            record = None  # a receipt of an earlier organization's closure: not this one's
        name = self.organizations.name_of(org_id) if org_id else None
        if name is None and record is not None and record.state != "completed":
            name = record.org_name
        return AccountView(organization_name=name, closure=closure_view(record) if record else None)

    def start(
        self, user_id: str, org_id: str | None, request: CloseAccountRequest, start: StartExecution
    ) -> AccountView:
        """Accept a closure (or resume one that failed or stalled) and start its execution.

        ``org_id`` is the caller's organization, None once their membership is gone (a closure in
        progress). Raises ``ValidationFailed`` (confirmName) when the typed name is not the
        organization's, ``PreconditionFailed`` when platform audiences should be deleted but no ad
        account is connected, ``Conflict`` when the account is already closed."""
        now = self.clock()
        record = self.closures.get(user_id)
        if record is not None and record.state == "completed" and org_id is not None:
            record = None
        if record is not None:
            return self._resume(record, request, start, now)
        if org_id is None:
            raise Forbidden(
                "Your user is not a member of any organization.",
                remedy="Ask your organization's administrator to add you.",
            )
        name = self.organizations.name_of(org_id) or ""
        _check_name(request.confirm_name, name)
        if request.delete_platform_audiences:
            self._require_connection(org_id)
        record = ClosureRecord(
            closure_id=str(uuid.uuid4()),
            user_id=user_id,
            org_id=org_id,
            org_name=name,
            delete_platform_audiences=request.delete_platform_audiences,
            state="running",
            phase=PHASES[0],
            requested_at=now,
            updated_at=now,
        )
        self.closures.put(record)
        start(_execution_name(record), {"user_id": user_id, "closure_id": record.closure_id})
        logger.info("account closure started", extra={"closure_id": record.closure_id})
        return self.view(user_id, org_id)

    def _resume(
        self, record: ClosureRecord, request: CloseAccountRequest, start: StartExecution, now: datetime
    ) -> AccountView:
        if record.state == "completed":
            raise Conflict(
                "This account is already closed: its data was deleted.",
                remedy="Nothing is left to do. Ask your administrator if you need a new organization.",
            )
        assert record.org_id is not None
        _check_name(request.confirm_name, record.org_name or "")
        stalled = now - record.updated_at >= STALLED_AFTER
        if record.state == "running" and not stalled:
            return self.view(record.user_id, None)  # already under way: asking again changes nothing
        if request.delete_platform_audiences and not record.delete_platform_audiences:
            if PHASES.index(record.phase) > PHASES.index("platform"):
                raise ValidationFailed(
                    "The closure is past the audiences: they can no longer be deleted on the platform by it.",
                    field="deletePlatformAudiences",
                    remedy="Resume without deleting platform audiences, and delete them in the "
                    "platform's ads manager.",
                )
            self._require_connection(record.org_id)
        record.delete_platform_audiences = request.delete_platform_audiences
        record.state = "running"
        record.attempt += 1
        record.error = record.remedy = None
        record.updated_at = now
        self.closures.put(record)
        start(_execution_name(record), {"user_id": record.user_id, "closure_id": record.closure_id})
        logger.info(
            "account closure resumed", extra={"closure_id": record.closure_id, "attempt": record.attempt}
        )
        return self.view(record.user_id, None)

    def _require_connection(self, org_id: str) -> None:
        connection = self.connections.get(org_id)
        if connection is None or connection.status != "active":
            raise PreconditionFailed(
                "The platform's audiences can only be deleted through a connected ad account, and this "
                "organization has none.",
                field="deletePlatformAudiences",
                remedy="Connect the ad account first, or close the account without deleting platform "
                "audiences (they then stay in the ad account).",
            )

    # --- the work (the state machine's steps) -------------------------------------------------------

    def advance(self, user_id: str, closure_id: str, *, budget: timedelta) -> ClosureRecord:
        """Do the closure's next pieces of work for about ``budget``, saving after each; returns the
        record (``completed`` when everything is gone). A closure that is not running is returned
        as it is."""
        record = self.closures.get(user_id)
        if record is None or record.closure_id != closure_id or record.state != "running":
            return _unchanged(record, closure_id)
        began = self.clock()
        while record.phase != "done":
            try:
                finished = self._piece(record)
            except ServiceError as error:
                # The service's own errors say what to do: the record keeps them for the dashboard.
                return self._fail(record, f"The closure stopped: {error.message}", error.remedy)
            if finished:
                record.phase = PHASES[PHASES.index(record.phase) + 1]
                record.cursor = None
            record.updated_at = self.clock()
            self.closures.put(record)
            if self.clock() - began >= budget:
                return record
        return self._finish(record)

    def record_failure(self, user_id: str, closure_id: str, error: str, cause: str) -> None:
        """Mark the closure failed with what went wrong and what to do (from the step's error)."""
        record = self.closures.get(user_id)
        if record is None or record.closure_id != closure_id or record.state != "running":
            return
        self._fail(record, *_failure_text(error, cause))

    def _fail(self, record: ClosureRecord, message: str, remedy: str | None) -> ClosureRecord:
        record.state = "failed"
        record.error = message
        record.remedy = f"{remedy} Then resume the closure." if remedy else RESUME_REMEDY
        record.updated_at = self.clock()
        self.closures.put(record)
        logger.warning(
            "account closure failed", extra={"closure_id": record.closure_id, "phase": record.phase}
        )
        return record

    def _piece(self, record: ClosureRecord) -> bool:
        """One bounded piece of the current phase; True when the phase has nothing left."""
        org_id = record.org_id
        assert org_id is not None
        phase = record.phase
        if phase == "access":
            deleted, record.cursor = self.items.delete_access(
                org_id, record.cursor, self.clock(), lambda members: self._disable(record, members)
            )
            _count(record, phase, deleted)
            if record.cursor is not None:
                return False
            # Nobody can start a checkout any more (the pages find no organization): stop the ones
            # open, so no shopper pays an organization that is going.
            if self.payments().stop(org_id):
                _count(record, phase, 1)
            return True
        if phase == "users":
            return self._users_piece(record)
        if phase == "idempotency":
            keys = idempotency_keys(self.audiences.list_for_org(org_id))
            deleted, record.cursor = self.items.delete_idempotency(org_id, keys, record.cursor)
            _count(record, phase, deleted)
            return record.cursor is None
        if phase == "platform":
            return self._platform_piece(record, org_id)
        if phase == "objects":
            return self._objects_piece(record, org_id)
        if phase == "keys":
            key_ids = self.items.api_key_ids(org_id)
            if not key_ids:
                return True
            _count(record, phase, self.items.delete_key(org_id, key_ids[0]))
            return len(key_ids) == 1
        if phase == "records":
            deleted, done = self.items.delete_partition(org_id, self.batch)
            _count(record, phase, deleted)
            return done and not self._late_arrivals(record, org_id)
        raise AssertionError(f"no piece of work in phase {phase}")

    def _disable(self, record: ClosureRecord, members: list[str]) -> None:
        """Disable the members about to lose their membership, except the person closing (deleted
        last, by the ``users`` phase), and remember them for that phase."""
        for user_id in members:
            if user_id == record.user_id:
                continue
            self.users().disable(user_id)
            if user_id not in record.pool_users:
                record.pool_users.append(user_id)

    def _users_piece(self, record: ClosureRecord) -> bool:
        """Delete up to ``batch`` members from the user pool; the person closing goes last."""
        for user_id in list(record.pool_users[: self.batch]):
            self.users().delete(user_id)
            record.pool_users.remove(user_id)
            _count(record, "users", 1)
        if record.pool_users:
            return False
        if self.users().delete(record.user_id):
            _count(record, "users", 1)
        return True

    def _platform_piece(self, record: ClosureRecord, org_id: str) -> bool:
        if not record.delete_platform_audiences:
            return True
        on_platform = [a for a in self.audiences.list_for_org(org_id) if _on_platform(a)]
        if not on_platform:
            return True
        audience = on_platform[0]
        platform = self.platform()
        if audience.publication is not None and audience.publication.on_platform:
            # Its ad set targets the audience, and the platform keeps an audience an ad set uses.
            platform.adverts.delete_advert(org_id, audience.audience_id, confirm=True)
        platform.audiences.delete(org_id, audience.audience_id, confirm=True)
        _count(record, "platform", 1)
        return len(on_platform) == 1

    def _late_arrivals(self, record: ClosureRecord, org_id: str) -> bool:
        """Look once more for files and keys written after their phase ran (by a request or a job
        already under way when the members were removed); anything found is deleted, or sends the
        closure back to that phase. True when the closure went back."""
        for role, prefix in organization_prefixes(org_id):
            deleted, done = self.objects[role].delete_prefix(prefix, self.batch)
            _count(record, "objects", deleted)
            if not done:
                record.phase, record.cursor = "objects", None
                return True
        if self.items.api_key_ids(org_id):
            record.phase, record.cursor = "keys", None
            return True
        return False

    def _objects_piece(self, record: ClosureRecord, org_id: str) -> bool:
        prefixes = organization_prefixes(org_id)
        index = int((record.cursor or {}).get("prefix", "0"))
        role, prefix = prefixes[index]
        deleted, done = self.objects[role].delete_prefix(prefix, self.batch)
        _count(record, "objects", deleted)
        if not done:
            return False
        if index + 1 == len(prefixes):
            return True
        record.cursor = {"prefix": str(index + 1)}
        return False

    def _finish(self, record: ClosureRecord) -> ClosureRecord:
        """Turn the record into a receipt: the counts and times stay, the organization's id and name
        go."""
        now = self.clock()
        record.state = "completed"
        record.org_id = None
        record.org_name = None
        record.cursor = None
        record.pool_users = []
        record.finished_at = record.updated_at = now
        self.closures.put(record)
        logger.info("account closure completed", extra={"closure_id": record.closure_id})
        return record


def closure_view(record: ClosureRecord) -> ClosureView:
    current = PHASES.index(record.phase)
    phases = []
    for index, name in enumerate(PHASES[:-1]):
        state: Literal["pending", "running", "done", "skipped"]
        if name == "platform" and not record.delete_platform_audiences:
            state = "skipped"
        elif index < current:
            state = "done"
        elif index == current:
            state = "running"
        else:
            state = "pending"
        phases.append(
            ClosurePhaseView(
                name=name, label=PHASE_LABELS[name], state=state, deleted=record.deleted.get(name, 0)
            )
        )
    return ClosureView(
        closure_id=record.closure_id,
        state=record.state,
        phase=record.phase,
        phases=phases,
        delete_platform_audiences=record.delete_platform_audiences,
        attempt=record.attempt,
        error=record.error,
        remedy=record.remedy,
        requested_at=record.requested_at,
        updated_at=record.updated_at,
        finished_at=record.finished_at,
    )


def _check_name(typed: str, name: str) -> None:
    if not name or typed.strip() != name.strip():
        raise ValidationFailed(
            "The name typed is not the organization's name, so nothing was deleted.",
            field="confirmName",
            remedy=f"Type the organization's name exactly as shown ({name.strip()}) to close the account.",
        )


def _on_platform(audience: AudienceRecord) -> bool:
    lookalike = audience.lookalike is not None and audience.lookalike.platform_audience_id is not None
    advert = audience.publication is not None and bool(audience.publication.on_platform)
    return bool(audience.platform_custom_audience_id) or lookalike or advert


def _count(record: ClosureRecord, phase: str, deleted: int) -> None:
    record.deleted[phase] = record.deleted.get(phase, 0) + deleted


def _execution_name(record: ClosureRecord) -> str:
    return f"closure-{record.closure_id}-{record.attempt}"


def _unchanged(record: ClosureRecord | None, closure_id: str) -> ClosureRecord:
    if record is None or record.closure_id != closure_id:
        raise LookupError(f"closure {closure_id} is not the user's current closure")
    return record


def _failure_text(error: str, cause: str) -> tuple[str, None]:
    """The message of a step that failed unexpectedly (a timeout, a crash). Only the error's type is
    told: its message may carry an AWS error or an identifier, which stays in the logs."""
    return f"The closure stopped unexpectedly ({error}).", None
