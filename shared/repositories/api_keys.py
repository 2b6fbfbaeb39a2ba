"""API-key records in DynamoDB.

A key is stored at ``APIKEY#<key_id>`` (the one read a prediction makes), and listed in its
organization's key list, ``APIKEY#ORG#<org_id>`` / ``<key_id>``, written in the same transaction. The
list is read with a strongly consistent query, and each key then with a strongly consistent read, so
a key just created, revoked or deleted shows as it is: an index (GSI1) is eventually consistent on
AWS, and the dashboard lists the keys right after creating or revoking one. The GSI1 attributes stay
on the key for the keys stored before the list existed (old enough for the index to hold them).
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from shared.clock import iso
from shared.records.api_keys import StoredApiKey
from shared.repositories.items import get_many_consistent, parse_time, query_all

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.service_resource import Table


def key_list_item(org_id: str, key_id: str) -> dict[str, str]:
    """The key of a key's entry in its organization's key list."""
    return {"pk": f"APIKEY#ORG#{org_id}", "sk": key_id}


def org_key_items(table: Table, org_id: str) -> list[dict[str, Any]]:
    """The stored items of the organization's keys as they are now (revoked ones included): those
    its key list and, for keys stored before the list, GSI1 name, each read strongly consistent."""
    # boto3 is imported where a query needs it, not by the predict function (botocore only).
    from boto3.dynamodb.conditions import Key

    listed = query_all(
        table, KeyConditionExpression=Key("pk").eq(key_list_item(org_id, "")["pk"]), ConsistentRead=True
    )
    indexed = query_all(
        table, IndexName="gsi1", KeyConditionExpression=Key("gsi1pk").eq(f"ORG#{org_id}#APIKEYS")
    )
    ids = dict.fromkeys([str(item["sk"]) for item in listed] + [str(item["key_id"]) for item in indexed])
    keys = [{"pk": f"APIKEY#{key_id}", "sk": "META"} for key_id in ids]
    return [item for item in get_many_consistent(table, keys) if item.get("org_id") == org_id]


class DynamoApiKeyStore:
    """Stores keys by ``key_id``; lists an organization's keys from its key list (module docstring)."""

    def __init__(self, table: Table) -> None:
        self._table = table

    def put(self, key: StoredApiKey) -> None:
        """Store a new key record and its entry in the organization's key list, in one transaction;
        never overwrites an existing key id."""
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
        listed = {**key_list_item(key.org_id, key.key_id), "created_at": iso(key.created_at)}
        self._table.meta.client.transact_write_items(
            TransactItems=[
                {
                    "Put": {
                        "TableName": self._table.name,
                        "Item": item,
                        "ConditionExpression": "attribute_not_exists(pk)",
                    }
                },
                {"Put": {"TableName": self._table.name, "Item": listed}},
            ]
        )

    def get(self, key_id: str) -> StoredApiKey | None:
        """The key record, or None."""
        item = self._table.get_item(Key={"pk": f"APIKEY#{key_id}", "sk": "META"}).get("Item")
        return _to_key(item) if item else None

    def list_for_org(self, org_id: str) -> list[StoredApiKey]:
        """All keys of an organization as they are now (one just created or revoked included),
        oldest first."""
        found = [_to_key(item) for item in org_key_items(self._table, org_id)]
        return sorted(found, key=lambda key: (key.created_at, key.key_id))

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
