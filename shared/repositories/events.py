"""Conversion events in DynamoDB: one item per dataset version's purchases (``PURCHASES#<version>``)
and one pointer item (``EVENTS``) naming the version whose purchases were last sent in full.

The pointer only moves forward, conditionally, in the same transaction that marks a version sent, so a
late step of an older version can never move it back.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from shared.records.events import PurchaseSend
from shared.repositories.items import from_item, to_item

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_dynamodb.service_resource import Table

_POINTER = "EVENTS"
_PURCHASES = "PURCHASES#"


def _pk(org_id: str) -> str:
    return f"ORG#{org_id}"


class DynamoEventStore:
    def __init__(self, table: Table, client: DynamoDBClient) -> None:
        self._table = table
        self._client = client

    def get_purchases(self, org_id: str, version: str) -> PurchaseSend | None:
        """The purchases of dataset version ``version``, or None before their first step."""
        item = self._table.get_item(Key={"pk": _pk(org_id), "sk": _PURCHASES + version}).get("Item")
        return _to_record(item) if item else None

    def put_purchases(self, record: PurchaseSend) -> None:
        """Store the purchases' progress (the step that owns the version is the only writer)."""
        item = {"pk": _pk(record.org_id), "sk": _PURCHASES + record.dataset_version}
        self._table.put_item(Item={**item, **to_item(record.model_dump())})

    def finish_purchases(self, record: PurchaseSend) -> None:
        """Store ``record`` (state ``sent``) and make its version the last sent in full, unless a later
        version already is (versions are named so they sort by time); no version is part-sent then."""
        from boto3.dynamodb.types import TypeSerializer

        serializer = TypeSerializer()
        item = {
            "pk": _pk(record.org_id),
            "sk": _PURCHASES + record.dataset_version,
            **to_item(record.model_dump()),
        }
        try:
            self._client.transact_write_items(
                TransactItems=[
                    {
                        "Put": {
                            "TableName": self._table.name,
                            "Item": {k: serializer.serialize(v) for k, v in item.items()},
                        }
                    },
                    {
                        "Update": {
                            "TableName": self._table.name,
                            "Key": {"pk": {"S": _pk(record.org_id)}, "sk": {"S": _POINTER}},
                            "UpdateExpression": "SET purchases_sent_through = :v REMOVE purchases_part_sent",
                            "ConditionExpression": (
                                "attribute_not_exists(purchases_sent_through) OR purchases_sent_through < :v"
                            ),
                            "ExpressionAttributeValues": {":v": {"S": record.dataset_version}},
                        }
                    },
                ]
            )
        except self._client.exceptions.TransactionCanceledException:
            # A later version was sent first: keep the pointer, store this version's outcome alone.
            self.put_purchases(record)

    def mark_part_sent(self, org_id: str, version: str) -> None:
        """Note that ``version``'s purchases are part-sent: a later version's step finishes it first."""
        self._table.update_item(
            Key={"pk": _pk(org_id), "sk": _POINTER},
            UpdateExpression="SET purchases_part_sent = :v",
            ExpressionAttributeValues={":v": version},
        )

    def pointers(self, org_id: str) -> tuple[str | None, str | None]:
        """The latest version whose purchases were sent in full, and a version part-sent since (or None)."""
        item = self._table.get_item(Key={"pk": _pk(org_id), "sk": _POINTER}).get("Item") or {}
        sent, part = item.get("purchases_sent_through"), item.get("purchases_part_sent")
        return (str(sent) if sent else None), (str(part) if part else None)


def _to_record(item: Mapping[str, Any]) -> PurchaseSend:
    values = {key: value for key, value in from_item(item).items() if key not in ("pk", "sk")}
    return PurchaseSend.model_validate(values)
