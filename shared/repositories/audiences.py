"""Audience records in DynamoDB (``ORG#<org>`` / ``AUDIENCE#<id>``), plus a pointer item per
idempotency key so a retried request finds the audience it already started.

Claims are conditional writes: the key's pointer (with the request's hash) is written only if absent;
the audience item only if absent (``create``); its worker lease (``lease``: owner, until) only if
free, expired or already the caller's; an activation attempt only if it follows the one recorded
(``begin_attempt``); and a worker's progress only while it holds the lease (``save_leased``).

Every write of the audience item increments its ``revision`` (a number; an item written before it
existed has none and counts as revision 0). A whole-item write (``put``, ``save_leased``,
``start_publication``, ``save_unchanged``) is conditional on the revision its writer read, so a write
made meanwhile by another writer (a sync's progress, a schedule change, a refresh, a drift check, an
activation step, a publication) is never overwritten by a stale copy: ``updated_at`` has whole
seconds only and cannot tell two writes in one second apart. On a conflict ``put`` reads the item
again and applies only the writer's own change to it (the ``apply`` the writer passes), or raises
``RecordChanged`` (409) when the writer has nothing safe to re-apply. The partial writes (the lease,
the attempt, the recovery mark) ``ADD`` one to the revision, so a whole-item writer that read before
them re-reads. ``delete`` is unconditional: a delete supersedes every write, and a writer finding the
item gone (its revision condition fails on a missing item) stops.

| item | pk | sk | attributes |
|---|---|---|---|
| an audience | ``ORG#<org>`` | ``AUDIENCE#<id>`` | the record (``AudienceRecord``), ``revision`` |
| an idempotency key | ``ORG#<org>`` | ``AUDIENCEKEY#<key>`` | ``audience_id``, ``request_sha256`` |

An audience still being created (``creating`` or ``uploading``) is also indexed under
``gsi1pk = AUDIENCES#in_progress`` with ``gsi1sk = <updated_at>#<org>#<id>``, so the stranded-upload
sweeper finds the ones nobody has touched since a cutoff with one query, never a scan; writing the
audience in any other state drops the index keys (the record is written whole).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from boto3.dynamodb.conditions import Key

from shared.clock import iso
from shared.errors import RecordChanged, RecordGone
from shared.records.audiences import AudienceRecord, WorkerLease
from shared.repositories.items import from_item, query_all, to_item

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.service_resource import Table
    from mypy_boto3_dynamodb.type_defs import PutItemInputTablePutItemTypeDef

IN_PROGRESS_INDEX_KEY = "AUDIENCES#in_progress"
_INDEX_ATTRIBUTES = {"pk", "sk", "gsi1pk", "gsi1sk"}
# How many times a writer re-reads and re-applies its change before giving up (each conflict is
# another writer's success, so this many in a row means the audience is being written continuously).
WRITE_ATTEMPTS = 5

# Another writer's change to apply again: a writer's own fields copied onto the record read afresh.
Reapply = Callable[[AudienceRecord], None]


def changed(audience_id: str) -> RecordChanged:
    return RecordChanged(
        f"Audience {audience_id} was changed by another action (a sync, a schedule change, a refresh or "
        "a check) while this one ran, so this change was not saved.",
        remedy="Reload the audience and do it again.",
    )


def _revision_condition(seen: int) -> tuple[str, dict[str, Any]]:
    """The condition that the stored item is at revision ``seen`` (no revision counts as 0), and the
    values it names; a missing item fails it."""
    if seen == 0:
        return "attribute_exists(pk) AND (attribute_not_exists(revision) OR revision = :seen)", {":seen": 0}
    return "revision = :seen", {":seen": seen}


def adopt(record: AudienceRecord, stored: AudienceRecord) -> None:
    """Make ``record`` (the writer's object, which its callers hold) what was stored."""
    for name in type(record).model_fields:
        setattr(record, name, getattr(stored, name))


class DynamoAudienceStore:
    def __init__(self, table: Table) -> None:
        self._table = table

    def put(self, record: AudienceRecord, apply: Reapply | None = None) -> None:
        """Write ``record`` whole if the stored one is still at the revision ``record`` was read at;
        ``record.revision`` is then the new one. When another writer stored it meanwhile: with
        ``apply`` (the writer's own change), read it again, ``apply`` it to that and write again,
        leaving ``record`` as stored; without, raise ``RecordChanged``. ``RecordGone`` when it was
        deleted meanwhile; ``apply`` may raise to give the write up (what it would re-apply no longer
        makes sense)."""
        for _ in range(WRITE_ATTEMPTS):
            if self._write(record):
                return
            if apply is None:
                raise changed(record.audience_id)
            stored = self.get(record.org_id, record.audience_id)
            if stored is None:
                raise RecordGone(
                    f"Audience {record.audience_id} was deleted meanwhile.",
                    remedy="List audiences to see the ones that remain.",
                )
            stored.updated_at = record.updated_at
            apply(stored)
            adopt(record, stored)
        raise changed(record.audience_id)

    def _write(
        self, record: AudienceRecord, condition: str = "", values: dict[str, Any] | None = None
    ) -> bool:
        """Put ``record`` at the next revision if the stored one is at ``record.revision`` (and
        ``condition`` holds); False otherwise."""
        expression, seen = _revision_condition(record.revision)
        if condition:
            expression = f"({expression}) AND ({condition})"
        item = _item(record)
        item["revision"] = record.revision + 1
        put: PutItemInputTablePutItemTypeDef = {
            "Item": item,
            "ConditionExpression": expression,
            "ExpressionAttributeValues": {**seen, **(values or {})},
        }
        if names := {name: value for name, value in _NAMES.items() if name in condition}:
            put["ExpressionAttributeNames"] = names  # DynamoDB refuses an empty map of names
        try:
            self._table.put_item(**put)
        except self._table.meta.client.exceptions.ConditionalCheckFailedException:
            return False
        record.revision += 1
        return True

    def save_unchanged(self, record: AudienceRecord) -> bool:
        """Write ``record`` whole if no one wrote the audience since it was read (its revision); False
        when another writer changed it meanwhile. For a check that read the record some platform calls
        ago and must not overwrite an activation's, a sync's or a delete's write."""
        return self._write(record)

    def mark_recovery(self, record: AudienceRecord) -> bool:
        """Write ``record.recovery`` (and ``updated_at``, which moves it in the in-progress index)
        if the audience is still in progress; False when it is not (it finished meanwhile)."""
        assert record.recovery is not None
        index = _index_keys(record)
        if not index:
            return False
        try:
            answer = self._table.update_item(
                Key=_key(record.org_id, record.audience_id),
                UpdateExpression="SET recovery = :recovery, updated_at = :updated, gsi1sk = :gsi1sk "
                "ADD revision :one",
                ConditionExpression="gsi1pk = :in_progress",
                ExpressionAttributeValues={
                    ":recovery": to_item(record.recovery.model_dump()),
                    ":updated": iso(record.updated_at),
                    ":gsi1sk": index["gsi1sk"],
                    ":in_progress": IN_PROGRESS_INDEX_KEY,
                    ":one": 1,
                },
                ReturnValues="UPDATED_NEW",
            )
        except self._table.meta.client.exceptions.ConditionalCheckFailedException:
            return False
        _follow(record, answer)
        return True

    def idle_in_progress(self, before: datetime) -> list[AudienceRecord]:
        """Audiences still ``creating``/``uploading`` whose record was last written before ``before``."""
        condition = Key("gsi1pk").eq(IN_PROGRESS_INDEX_KEY) & Key("gsi1sk").lt(iso(before))
        items = query_all(self._table, IndexName="gsi1", KeyConditionExpression=condition)
        return [_to_record(item) for item in items]

    def start_publication(self, record: AudienceRecord) -> bool:
        """Save ``record`` with its new publication unless another one was started meanwhile (one
        that was rolled back may be replaced). False when another request got there first. Another
        writer's change made meanwhile is kept: the publication is applied to the record read again."""
        publication = record.publication
        for _ in range(WRITE_ATTEMPTS):
            if self._write(
                record,
                "attribute_not_exists(publication) OR publication.#state = :replaceable",
                {":replaceable": "rolled_back"},
            ):
                return True
            stored = self.get(record.org_id, record.audience_id)
            if stored is None:
                return False
            if stored.publication is not None and stored.publication.state != "rolled_back":
                return False
            stored.publication = publication
            stored.updated_at = record.updated_at
            adopt(record, stored)
        raise changed(record.audience_id)

    def claim_key(
        self, org_id: str, idempotency_key: str, audience_id: str, request_sha256: str | None = None
    ) -> tuple[str, str | None]:
        """Bind ``idempotency_key`` to ``audience_id`` (and the request's hash) unless it is bound
        already; returns the bound audience id and the hash it was bound with."""
        key = {"pk": f"ORG#{org_id}", "sk": f"AUDIENCEKEY#{idempotency_key}"}
        item: dict[str, Any] = {**key, "audience_id": audience_id}
        if request_sha256:
            item["request_sha256"] = request_sha256
        try:
            self._table.put_item(Item=item, ConditionExpression="attribute_not_exists(pk)")
        except self._table.meta.client.exceptions.ConditionalCheckFailedException:
            found = self._table.get_item(Key=key, ConsistentRead=True)["Item"]
            digest = found.get("request_sha256")
            return str(found["audience_id"]), str(digest) if digest else None
        return audience_id, request_sha256

    def release_key(self, org_id: str, idempotency_key: str, audience_id: str) -> None:
        """Unbind ``idempotency_key`` if it is still bound to ``audience_id`` (a failed creation)."""
        # Bound to another audience, or already released: nothing to do.
        with contextlib.suppress(self._table.meta.client.exceptions.ConditionalCheckFailedException):
            self._table.delete_item(
                Key={"pk": f"ORG#{org_id}", "sk": f"AUDIENCEKEY#{idempotency_key}"},
                ConditionExpression="audience_id = :audience_id",
                ExpressionAttributeValues={":audience_id": audience_id},
            )

    def create(self, record: AudienceRecord) -> bool:
        """Write a new audience; False when one with its id exists already (another request made it)."""
        try:
            self._table.put_item(
                Item=_item(record),
                ConditionExpression="attribute_not_exists(pk)",
            )
        except self._table.meta.client.exceptions.ConditionalCheckFailedException:
            return False
        return True

    def acquire_lease(self, org_id: str, audience_id: str, lease: WorkerLease, now: datetime) -> bool:
        """Take the audience's worker lease if it is free, has expired, or is ``lease.owner``'s."""
        try:
            self._table.update_item(
                Key=_key(org_id, audience_id),
                UpdateExpression="SET lease = :lease ADD revision :one",
                ConditionExpression="attribute_exists(pk) AND (attribute_not_exists(lease) "
                "OR lease.#until < :now OR lease.#owner = :owner)",
                ExpressionAttributeNames={"#until": "until", "#owner": "owner"},
                ExpressionAttributeValues={
                    ":lease": to_item(lease.model_dump()),
                    ":now": iso(now),
                    ":owner": lease.owner,
                    ":one": 1,
                },
            )
        except self._table.meta.client.exceptions.ConditionalCheckFailedException:
            return False
        return True

    def release_lease(self, org_id: str, audience_id: str, owner: str) -> None:
        """Give the lease up if ``owner`` still holds it."""
        try:
            self._table.update_item(
                Key=_key(org_id, audience_id),
                UpdateExpression="REMOVE lease ADD revision :one",
                ConditionExpression="lease.#owner = :owner",
                ExpressionAttributeNames={"#owner": "owner"},
                ExpressionAttributeValues={":owner": owner, ":one": 1},
            )
        except self._table.meta.client.exceptions.ConditionalCheckFailedException:
            return

    def transfer_lease(self, org_id: str, audience_id: str, owner: str, lease: WorkerLease) -> bool:
        """Hand the lease from ``owner`` to ``lease.owner`` (a request handing over to an execution)."""
        try:
            self._table.update_item(
                Key=_key(org_id, audience_id),
                UpdateExpression="SET lease = :lease ADD revision :one",
                ConditionExpression="lease.#owner = :owner",
                ExpressionAttributeNames={"#owner": "owner"},
                ExpressionAttributeValues={
                    ":lease": to_item(lease.model_dump()),
                    ":owner": owner,
                    ":one": 1,
                },
            )
        except self._table.meta.client.exceptions.ConditionalCheckFailedException:
            return False
        return True

    def save_leased(self, record: AudienceRecord, owner: str) -> bool:
        """Save ``record`` only while ``owner`` holds its lease; False when someone else took it. What
        other writers own and wrote meanwhile (the sync's schedule and runs, the publication, the
        drift check's findings) is kept: the holder's record takes them and is written again."""
        for _ in range(WRITE_ATTEMPTS):
            if self._write(record, "lease.#owner = :owner", {":owner": owner}):
                return True
            stored = self.get(record.org_id, record.audience_id)
            if stored is None or stored.lease is None or stored.lease.owner != owner:
                return False
            for name in _NOT_THE_LEASE_HOLDERS:
                setattr(record, name, getattr(stored, name))
            record.revision = stored.revision
        raise changed(record.audience_id)

    def begin_attempt(self, record: AudienceRecord, previous_attempt: int | None) -> bool:
        """Record ``record.activation`` (a new attempt) unless another attempt than
        ``previous_attempt`` (None: none yet) was recorded meanwhile; the record's status and
        failure are written with it, the lease is left as it is."""
        assert record.activation is not None
        condition = (
            "attribute_not_exists(activation)"
            if previous_attempt is None
            else "activation.attempt = :previous"
        )
        values: dict[str, Any] = {
            ":activation": to_item(record.activation.model_dump()),
            ":status": record.status,
            ":updated": iso(record.updated_at),
        }
        if previous_attempt is not None:
            values[":previous"] = previous_attempt
        # The in-progress index follows the status, as a whole-item write does.
        index = _index_keys(record)
        if index:
            values.update({":gsi1pk": index["gsi1pk"], ":gsi1sk": index["gsi1sk"]})
            expression = (
                "SET activation = :activation, #status = :status, updated_at = :updated, "
                "gsi1pk = :gsi1pk, gsi1sk = :gsi1sk REMOVE failure ADD revision :one"
            )
        else:
            expression = (
                "SET activation = :activation, #status = :status, updated_at = :updated "
                "REMOVE failure, gsi1pk, gsi1sk ADD revision :one"
            )
        values[":one"] = 1
        try:
            answer = self._table.update_item(
                Key=_key(record.org_id, record.audience_id),
                UpdateExpression=expression,
                ConditionExpression=f"attribute_exists(pk) AND ({condition})",
                ExpressionAttributeNames={"#status": "status"},
                ExpressionAttributeValues=values,
                ReturnValues="UPDATED_NEW",
            )
        except self._table.meta.client.exceptions.ConditionalCheckFailedException:
            return False
        _follow(record, answer)
        return True

    def get(self, org_id: str, audience_id: str) -> AudienceRecord | None:
        item = self._table.get_item(
            Key={"pk": f"ORG#{org_id}", "sk": f"AUDIENCE#{audience_id}"}, ConsistentRead=True
        ).get("Item")
        return _to_record(item) if item else None

    def list_for_org(self, org_id: str) -> list[AudienceRecord]:
        condition = Key("pk").eq(f"ORG#{org_id}") & Key("sk").begins_with("AUDIENCE#")
        return [_to_record(i) for i in query_all(self._table, KeyConditionExpression=condition)]

    def delete(self, record: AudienceRecord) -> None:
        self._table.delete_item(Key={"pk": f"ORG#{record.org_id}", "sk": f"AUDIENCE#{record.audience_id}"})
        if record.idempotency_key:
            self._table.delete_item(
                Key={"pk": f"ORG#{record.org_id}", "sk": f"AUDIENCEKEY#{record.idempotency_key}"}
            )


# What the activation's lease holder does not write: other writers' fields, taken from the stored
# record when the holder's save meets their change.
_NOT_THE_LEASE_HOLDERS = ("sync", "publication", "platform_changes")
_NAMES = {"#owner": "owner", "#state": "state"}


def _follow(record: AudienceRecord, answer: Any) -> None:
    """After a partial write: ``record`` is the stored one again only if nobody wrote between its
    read and this write (the revision moved by one); otherwise it keeps the revision it was read at,
    so its whole-item writes meet the other writer's change instead of overwriting it."""
    revision = int(answer["Attributes"]["revision"])
    if revision == record.revision + 1:
        record.revision = revision


def _key(org_id: str, audience_id: str) -> dict[str, str]:
    return {"pk": f"ORG#{org_id}", "sk": f"AUDIENCE#{audience_id}"}


def _item(record: AudienceRecord) -> dict[str, Any]:
    return {**_key(record.org_id, record.audience_id), **to_item(record.model_dump()), **_index_keys(record)}


def _index_keys(record: AudienceRecord) -> dict[str, str]:
    if record.status not in ("creating", "uploading"):
        return {}
    return {
        "gsi1pk": IN_PROGRESS_INDEX_KEY,
        "gsi1sk": f"{iso(record.updated_at)}#{record.org_id}#{record.audience_id}",
    }


def _to_record(item: dict[str, Any]) -> AudienceRecord:
    return AudienceRecord.model_validate(
        from_item({k: v for k, v in item.items() if k not in _INDEX_ATTRIBUTES})
    )
