"""Dataset versions in DynamoDB: one item per version (``DATASET#<version>``) and one pointer item
(``DATASOURCE``) naming the version in force.

A sync stores its version whole (one conditional put) without moving the pointer; the pointer moves
when the version's purchase model is trained, in the same transaction that records that training as
succeeded, so a reader sees either the previous dataset or the whole new one with its model, never
half a sync, and a version whose training fails never replaces the data in force. The pointer only
moves forward: a version older than the one in force never takes its place. Versions are named so they
sort by time; their items are never rewritten except for the ``training`` map, which each model's
training job updates by path (``training.<model type>``), so the two jobs running side by side cannot
overwrite each other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from boto3.dynamodb.conditions import Key
from botocore.exceptions import ClientError

from shared.records.datasources import DatasetVersion, ModelTraining, SyncRecord
from shared.repositories.items import from_item, query_all, to_item

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_dynamodb.service_resource import Table

_POINTER = "DATASOURCE"
_VERSION = "DATASET#"
_SYNC = "SYNC#"


def _pk(org_id: str) -> str:
    return f"ORG#{org_id}"


class DynamoDatasetStore:
    def __init__(self, table: Table, client: DynamoDBClient) -> None:
        self._table = table
        self._client = client

    def store(self, record: DatasetVersion) -> None:
        """Store a new version, not yet in force (``record_training`` with ``publish`` puts it there)."""
        item = {"pk": _pk(record.org_id), "sk": _VERSION + record.version, **to_item(record.model_dump())}
        # A version is immutable: never overwrite one.
        self._table.put_item(Item=item, ConditionExpression="attribute_not_exists(pk)")

    def current(self, org_id: str) -> DatasetVersion | None:
        """The version in force, or None before the first sync."""
        pointer = self._table.get_item(Key={"pk": _pk(org_id), "sk": _POINTER}).get("Item")
        if not pointer:
            return None
        return self.get(org_id, str(pointer["current_version"]))

    def get(self, org_id: str, version: str) -> DatasetVersion | None:
        item = self._table.get_item(Key={"pk": _pk(org_id), "sk": _VERSION + version}).get("Item")
        return _to_record(item) if item else None

    def list_versions(self, org_id: str) -> list[DatasetVersion]:
        """Every version, newest first."""
        condition = Key("pk").eq(_pk(org_id)) & Key("sk").begins_with(_VERSION)
        items = query_all(self._table, KeyConditionExpression=condition, ScanIndexForward=False)
        return [_to_record(item) for item in items]

    def latest(self, org_id: str) -> DatasetVersion | None:
        """The newest version stored, in force or not (None before the first sync)."""
        condition = Key("pk").eq(_pk(org_id)) & Key("sk").begins_with(_VERSION)
        items = self._table.query(KeyConditionExpression=condition, ScanIndexForward=False, Limit=1)["Items"]
        return _to_record(items[0]) if items else None

    def record_training(
        self, org_id: str, version: str, model_type: str, training: ModelTraining, *, publish: bool = False
    ) -> None:
        """Set one model's training state on a version (which must exist); with ``publish``, put the
        version in force in the same transaction, unless the one in force is newer (then only the
        training is recorded)."""
        update: dict[str, Any] = {
            "Key": {"pk": _pk(org_id), "sk": _VERSION + version},
            "UpdateExpression": "SET #training.#type = :training",
            "ConditionExpression": "attribute_exists(pk)",
            "ExpressionAttributeNames": {"#training": "training", "#type": model_type},
            "ExpressionAttributeValues": {":training": to_item(training.model_dump())},
        }
        if publish:
            from boto3.dynamodb.types import TypeSerializer

            serializer = TypeSerializer()

            def typed(values: dict[str, Any]) -> dict[str, Any]:
                return {k: serializer.serialize(v) for k, v in values.items()}

            try:
                self._client.transact_write_items(
                    TransactItems=[
                        {
                            "Update": {
                                "TableName": self._table.name,
                                "Key": typed(update["Key"]),
                                "UpdateExpression": update["UpdateExpression"],
                                "ConditionExpression": update["ConditionExpression"],
                                "ExpressionAttributeNames": update["ExpressionAttributeNames"],
                                "ExpressionAttributeValues": typed(update["ExpressionAttributeValues"]),
                            }
                        },
                        {
                            "Update": {
                                "TableName": self._table.name,
                                "Key": typed({"pk": _pk(org_id), "sk": _POINTER}),
                                "UpdateExpression": "SET current_version = :v",
                                # Forward only: a slower training of an older sync never undoes a newer one.
                                "ConditionExpression": (
                                    "attribute_not_exists(current_version) OR current_version < :v"
                                ),
                                "ExpressionAttributeValues": {":v": {"S": version}},
                            }
                        },
                    ]
                )
                return
            except ClientError as exc:
                if exc.response.get("Error", {}).get("Code") != "TransactionCanceledException":
                    raise
                # A newer version is in force (or this one is gone: the plain update below says so).
        self._table.update_item(**update)

    def put_sync(self, record: SyncRecord) -> None:
        """Store a sync's state (the sync job rewrites it as it moves on)."""
        item = {"pk": _pk(record.org_id), "sk": _SYNC + record.sync_id, **to_item(record.model_dump())}
        self._table.put_item(Item=item)

    def get_sync(self, org_id: str, sync_id: str) -> SyncRecord | None:
        item = self._table.get_item(Key={"pk": _pk(org_id), "sk": _SYNC + sync_id}).get("Item")
        return SyncRecord.model_validate(_fields(item)) if item else None

    def list_syncs(self, org_id: str) -> list[SyncRecord]:
        """Every sync, newest first (sync ids sort by time)."""
        condition = Key("pk").eq(_pk(org_id)) & Key("sk").begins_with(_SYNC)
        items = query_all(self._table, KeyConditionExpression=condition, ScanIndexForward=False)
        return [SyncRecord.model_validate(_fields(item)) for item in items]


def _fields(item: dict[str, Any]) -> dict[str, Any]:
    return dict(from_item({k: v for k, v in item.items() if k not in {"pk", "sk"}}))


def _to_record(item: dict[str, Any]) -> DatasetVersion:
    return DatasetVersion.model_validate(_fields(item))
