"""Audience records in DynamoDB (``ORG#<org>`` / ``AUDIENCE#<id>``), plus a pointer item per
idempotency key so a retried request finds the audience it already started.

Claims are conditional writes: the key's pointer (with the request's hash) is written only if absent;
the audience item only if absent (``create``); its worker lease (``lease``: owner, until) only if
free, expired or already the caller's; an activation attempt only if it follows the one recorded
(``begin_attempt``); and a worker's progress only while it holds the lease (``save_leased``).

An audience still being created (``creating`` or ``uploading``) is also indexed under
``gsi1pk = AUDIENCES#in_progress`` with ``gsi1sk = <updated_at>#<org>#<id>``, so the stranded-upload
sweeper finds the ones nobody has touched since a cutoff with one query, never a scan; writing the
audience in any other state drops the index keys (the record is written whole).
"""

from __future__ import annotations

import contextlib
from datetime import datetime
from typing import TYPE_CHECKING, Any

from boto3.dynamodb.conditions import Key

from shared.clock import iso
from shared.records.audiences import AudienceRecord, WorkerLease
from shared.repositories.items import from_item, query_all, to_item

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.service_resource import Table

IN_PROGRESS_INDEX_KEY = "AUDIENCES#in_progress"
_INDEX_ATTRIBUTES = {"pk", "sk", "gsi1pk", "gsi1sk"}


class DynamoAudienceStore:
    def __init__(self, table: Table) -> None:
        self._table = table

    def put(self, record: AudienceRecord) -> None:
        self._table.put_item(Item=_item(record))

    def save_unchanged(self, record: AudienceRecord, seen: datetime) -> bool:
        """Write ``record`` whole if the stored one was last written at ``seen`` (its ``updated_at``
        when read); False when another writer changed it meanwhile. For a check that read the record
        some platform calls ago and must not overwrite an activation's, a sync's or a delete's write."""
        try:
            self._table.put_item(
                Item=_item(record),
                ConditionExpression="updated_at = :seen",
                ExpressionAttributeValues={":seen": iso(seen)},
            )
        except self._table.meta.client.exceptions.ConditionalCheckFailedException:
            return False
        return True

    def mark_recovery(self, record: AudienceRecord) -> bool:
        """Write ``record.recovery`` (and ``updated_at``, which moves it in the in-progress index)
        if the audience is still in progress; False when it is not (it finished meanwhile)."""
        assert record.recovery is not None
        index = _index_keys(record)
        if not index:
            return False
        try:
            self._table.update_item(
                Key=_key(record.org_id, record.audience_id),
                UpdateExpression="SET recovery = :recovery, updated_at = :updated, gsi1sk = :gsi1sk",
                ConditionExpression="gsi1pk = :in_progress",
                ExpressionAttributeValues={
                    ":recovery": to_item(record.recovery.model_dump()),
                    ":updated": iso(record.updated_at),
                    ":gsi1sk": index["gsi1sk"],
                    ":in_progress": IN_PROGRESS_INDEX_KEY,
                },
            )
        except self._table.meta.client.exceptions.ConditionalCheckFailedException:
            return False
        return True

    def idle_in_progress(self, before: datetime) -> list[AudienceRecord]:
        """Audiences still ``creating``/``uploading`` whose record was last written before ``before``."""
        condition = Key("gsi1pk").eq(IN_PROGRESS_INDEX_KEY) & Key("gsi1sk").lt(iso(before))
        items = query_all(self._table, IndexName="gsi1", KeyConditionExpression=condition)
        return [_to_record(item) for item in items]

    def start_publication(self, record: AudienceRecord) -> bool:
        """Save ``record`` with its new publication unless another one was started meanwhile (one
        that was rolled back may be replaced). False when another request got there first."""
        try:
            self._table.put_item(
                Item=_item(record),
                ConditionExpression="attribute_not_exists(publication) OR publication.#state = :replaceable",
                ExpressionAttributeNames={"#state": "state"},
                ExpressionAttributeValues={":replaceable": "rolled_back"},
            )
        except self._table.meta.client.exceptions.ConditionalCheckFailedException:
            return False
        return True

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
                UpdateExpression="SET lease = :lease",
                ConditionExpression="attribute_exists(pk) AND (attribute_not_exists(lease) "
                "OR lease.#until < :now OR lease.#owner = :owner)",
                ExpressionAttributeNames={"#until": "until", "#owner": "owner"},
                ExpressionAttributeValues={
                    ":lease": to_item(lease.model_dump()),
                    ":now": iso(now),
                    ":owner": lease.owner,
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
                UpdateExpression="REMOVE lease",
                ConditionExpression="lease.#owner = :owner",
                ExpressionAttributeNames={"#owner": "owner"},
                ExpressionAttributeValues={":owner": owner},
            )
        except self._table.meta.client.exceptions.ConditionalCheckFailedException:
            return

    def transfer_lease(self, org_id: str, audience_id: str, owner: str, lease: WorkerLease) -> bool:
        """Hand the lease from ``owner`` to ``lease.owner`` (a request handing over to an execution)."""
        try:
            self._table.update_item(
                Key=_key(org_id, audience_id),
                UpdateExpression="SET lease = :lease",
                ConditionExpression="lease.#owner = :owner",
                ExpressionAttributeNames={"#owner": "owner"},
                ExpressionAttributeValues={":lease": to_item(lease.model_dump()), ":owner": owner},
            )
        except self._table.meta.client.exceptions.ConditionalCheckFailedException:
            return False
        return True

    def save_leased(self, record: AudienceRecord, owner: str) -> bool:
        """Save ``record`` only while ``owner`` holds its lease; False when someone else took it."""
        try:
            self._table.put_item(
                Item=_item(record),
                ConditionExpression="lease.#owner = :owner",
                ExpressionAttributeNames={"#owner": "owner"},
                ExpressionAttributeValues={":owner": owner},
            )
        except self._table.meta.client.exceptions.ConditionalCheckFailedException:
            return False
        return True

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
                "gsi1pk = :gsi1pk, gsi1sk = :gsi1sk REMOVE failure"
            )
        else:
            expression = (
                "SET activation = :activation, #status = :status, updated_at = :updated "
                "REMOVE failure, gsi1pk, gsi1sk"
            )
        try:
            self._table.update_item(
                Key=_key(record.org_id, record.audience_id),
                UpdateExpression=expression,
                ConditionExpression=f"attribute_exists(pk) AND ({condition})",
                ExpressionAttributeNames={"#status": "status"},
                ExpressionAttributeValues=values,
            )
        except self._table.meta.client.exceptions.ConditionalCheckFailedException:
            return False
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
