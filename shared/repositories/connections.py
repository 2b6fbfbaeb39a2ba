"""Platform connections and pending OAuth states in DynamoDB.

Active connections are also indexed under ``gsi1pk = CONNECTIONS#active`` so the scheduled
validation job finds them with a query, never a scan; disconnecting removes the index keys.
"""

from __future__ import annotations

import contextlib
from datetime import datetime
from typing import TYPE_CHECKING, Any

from boto3.dynamodb.conditions import Key

from shared.clock import iso
from shared.records.connections import Connection
from shared.repositories.items import from_item, get_many_consistent, query_all, to_item

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.service_resource import Table

ACTIVE_INDEX_KEY = "CONNECTIONS#active"


def _key(org_id: str) -> dict[str, str]:
    return {"pk": f"ORG#{org_id}", "sk": "CONNECTION#platform"}


class DynamoConnectionStore:
    def __init__(self, table: Table) -> None:
        self._table = table

    def put(self, connection: Connection) -> None:
        """Store the connection as a whole (there is one per organization)."""
        item: dict[str, Any] = {**_key(connection.org_id), **to_item(connection.model_dump())}
        if connection.status == "active":
            item.update(gsi1pk=ACTIVE_INDEX_KEY, gsi1sk=connection.org_id)
        self._table.put_item(Item=item)

    def get(self, org_id: str) -> Connection | None:
        item = self._table.get_item(Key=_key(org_id), ConsistentRead=True).get("Item")
        return _to_connection(item) if item else None

    def active(self) -> list[Connection]:
        """Every active connection of every organization, as it is now (the validation job, the
        audience sync schedule). The index only names them: it is eventually consistent, and a
        connection it still shows may have been disconnected or reconnected with another token a
        moment ago, which the token check would otherwise write back over."""
        items = query_all(
            self._table,
            IndexName="gsi1",
            KeyConditionExpression=Key("gsi1pk").eq(ACTIVE_INDEX_KEY),
            ProjectionExpression="pk, sk",
        )
        keys = [{"pk": item["pk"], "sk": item["sk"]} for item in items]
        current = [_to_connection(item) for item in get_many_consistent(self._table, keys)]
        return sorted((c for c in current if c.status == "active"), key=lambda c: c.org_id)

    def record_usage(self, org_id: str, usage: dict[str, Any], now: datetime) -> None:
        """Keep the latest usage-header snapshot the platform returned for this connection."""
        self._table.update_item(
            Key=_key(org_id),
            UpdateExpression="SET #usage = :usage, usage_captured_at = :now",
            ConditionExpression="attribute_exists(pk)",
            ExpressionAttributeNames={"#usage": "usage"},
            ExpressionAttributeValues={":usage": to_item(usage), ":now": iso(now)},
        )

    def record_token_rejected(
        self, org_id: str, connected_at: datetime | None, error: str, now: datetime
    ) -> None:
        """The platform refused the token: health ``invalid`` with ``error``, as a validation would
        record it. Only on the connection the token belongs to (same ``connected_at``): a reconnect
        made meanwhile has a new token, which this says nothing about."""
        condition = "attribute_exists(pk) AND " + (
            "connected_at = :connected_at" if connected_at else "attribute_not_exists(connected_at)"
        )
        values: dict[str, Any] = {":invalid": "invalid", ":error": error, ":now": iso(now)}
        if connected_at:
            values[":connected_at"] = iso(connected_at)
        with contextlib.suppress(self._table.meta.client.exceptions.ConditionalCheckFailedException):
            self._table.update_item(
                Key=_key(org_id),
                UpdateExpression=(
                    "SET token_health = :invalid, validation_error = :error, last_validated_at = :now"
                ),
                ConditionExpression=condition,
                ExpressionAttributeValues=values,
            )


class DynamoOAuthStateStore:
    """Pending OAuth ``state`` nonces: created at connect, consumed once at the callback."""

    def __init__(self, table: Table) -> None:
        self._table = table

    def create(self, nonce: str, org_id: str, user_id: str, expires_at: datetime) -> None:
        self._table.put_item(
            Item={
                "pk": f"OAUTHSTATE#{nonce}",
                "sk": "META",
                "org_id": org_id,
                "user_id": user_id,
                # Epoch seconds: the table's TTL attribute removes abandoned states.
                "expires_at": int(expires_at.timestamp()),
            },
            ConditionExpression="attribute_not_exists(pk)",
        )

    def consume(self, nonce: str, org_id: str, user_id: str) -> dict[str, Any] | None:
        """Delete the state issued to ``user_id`` in ``org_id`` and return what it held; None if it
        was unknown, already used or issued to someone else (then it stays for its owner)."""
        try:
            result = self._table.delete_item(
                Key={"pk": f"OAUTHSTATE#{nonce}", "sk": "META"},
                ConditionExpression="attribute_exists(pk) AND org_id = :org AND user_id = :user",
                ExpressionAttributeValues={":org": org_id, ":user": user_id},
                ReturnValues="ALL_OLD",
            )
        except self._table.meta.client.exceptions.ConditionalCheckFailedException:
            return None
        attributes: dict[str, Any] = from_item(result.get("Attributes", {}))
        return attributes


def _to_connection(item: dict[str, Any]) -> Connection:
    data = from_item({k: v for k, v in item.items() if k not in {"pk", "sk", "gsi1pk", "gsi1sk"}})
    return Connection.model_validate(data)
