"""API-key records in DynamoDB."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from shared.clock import iso
from shared.records.api_keys import StoredApiKey
from shared.repositories.items import parse_time, query_all

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.service_resource import Table


class DynamoApiKeyStore:
    """Stores keys by ``key_id``; lists an organization's keys through GSI1."""

    def __init__(self, table: Table) -> None:
        self._table = table

    def put(self, key: StoredApiKey) -> None:
        """Store a new key record; never overwrites an existing key id."""
        item: dict[str, Any] = {
            "pk": f"APIKEY#{key.key_id}",
            "sk": "META",
            "gsi1pk": f"ORG#{key.org_id}#APIKEYS",
            "gsi1sk": f"{iso(key.created_at)}#{key.key_id}",
            "org_id": key.org_id,
            "key_id": key.key_id,
            "prefix": key.prefix,
            "label": key.label,
            "secret_hash": key.secret_hash,
            "created_at": iso(key.created_at),
        }
        if key.daily_quota is not None:
            item["daily_quota"] = key.daily_quota
        self._table.put_item(Item=item, ConditionExpression="attribute_not_exists(pk)")

    def get(self, key_id: str) -> StoredApiKey | None:
        """The key record, or None."""
        item = self._table.get_item(Key={"pk": f"APIKEY#{key_id}", "sk": "META"}).get("Item")
        return _to_key(item) if item else None

    def list_for_org(self, org_id: str) -> list[StoredApiKey]:
        """All keys of an organization, oldest first."""
        # boto3 is imported where a query needs it, not by the predict function (botocore only).
        from boto3.dynamodb.conditions import Key

        items = query_all(
            self._table, IndexName="gsi1", KeyConditionExpression=Key("gsi1pk").eq(f"ORG#{org_id}#APIKEYS")
        )
        return [_to_key(i) for i in items]

    def revoke(self, org_id: str, key_id: str, now: datetime) -> StoredApiKey | None:
        """Mark a key revoked (the first revocation time is kept) and return the updated record;
        None if the organization has no such key."""
        try:
            result = self._table.update_item(
                Key={"pk": f"APIKEY#{key_id}", "sk": "META"},
                UpdateExpression="SET revoked_at = if_not_exists(revoked_at, :now)",
                ConditionExpression="org_id = :org",
                ExpressionAttributeValues={":now": iso(now), ":org": org_id},
                ReturnValues="ALL_NEW",
            )
        except self._table.meta.client.exceptions.ConditionalCheckFailedException:
            return None
        return _to_key(result["Attributes"])


def api_key_from_item(item: dict[str, Any]) -> StoredApiKey:
    """The record of a stored key item (numbers as Decimal or int)."""
    return _to_key(item)


def _to_key(item: dict[str, Any]) -> StoredApiKey:
    created = parse_time(item["created_at"])
    assert created is not None
    return StoredApiKey(
        org_id=item["org_id"],
        key_id=item["key_id"],
        prefix=item["prefix"],
        label=item.get("label", ""),
        secret_hash=item["secret_hash"],
        created_at=created,
        revoked_at=parse_time(item.get("revoked_at")),
        daily_quota=int(item["daily_quota"]) if "daily_quota" in item else None,
    )
