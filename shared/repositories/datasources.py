"""Dataset versions in DynamoDB: one item per version (``DATASET#<version>``) and one pointer item
(``DATASOURCE``) naming the version in force.

A sync stores its version whole (one conditional put) without moving the pointer; the pointer moves
when the version's purchase training ends, in the same transaction that records its outcome, so a
reader sees either the previous dataset or the whole new one with its model, never half a sync. A
version whose data the training refused replaces only what is no better than it: nothing (a young
shop's first sync: its catalog, audiences and readiness read it rather than nothing), or a version the
training refused too with no more customers (the pointer keeps ``refused_customers`` for that
condition), so the newest data serves until a model accepts one, and a tiny file never replaces a
larger one or data a model was trained on. The pointer only moves forward: a version older than the
one in force never takes its place. Both rules are conditions of the one write, so two syncs racing
cannot both take the pointer as first. Versions are named so they sort by time; their items are never
rewritten except for the ``training`` map, which each model's training job updates by path
(``training.<model type>``), so the two jobs running side by side cannot overwrite each other.
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
    from mypy_boto3_dynamodb.type_defs import AttributeValueTypeDef

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
        self,
        org_id: str,
        version: str,
        model_type: str,
        training: ModelTraining,
        *,
        publish: bool = False,
        refused: bool = False,
    ) -> None:
        """Set one model's training state on a version (which must exist); with ``publish``, put the
        version in force in the same transaction, unless the one in force is newer (then only the
        training is recorded). With ``refused`` too (the training refused the data), the version goes in
        force only where nothing is, or where the version in force was refused as well and has no more
        customers than this one."""
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

            move, condition, values = self._pointer_move(org_id, version, refused)
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
                                "UpdateExpression": move,
                                "ConditionExpression": condition,
                                "ExpressionAttributeValues": values,
                            }
                        },
                    ]
                )
                return
            except ClientError as exc:
                if exc.response.get("Error", {}).get("Code") != "TransactionCanceledException":
                    raise
                # A newer (or, for refused data, a better) version is in force, or this one is gone:
                # the plain update below says so.
        self._table.update_item(**update)

    def _pointer_move(
        self, org_id: str, version: str, refused: bool
    ) -> tuple[str, str, dict[str, AttributeValueTypeDef]]:
        """The pointer's update, its condition and their values, forward only: a slower training of an
        older sync never undoes a newer one."""
        if not refused:
            return (
                "SET current_version = :v REMOVE refused_customers",
                "attribute_not_exists(current_version) OR current_version < :v",
                {":v": {"S": version}},
            )
        # Refused data: only in place of nothing, or of refused data with no more customers. A version
        # is never rewritten, so its count read here is the one it was stored with. A pointer without
        # refused_customers names data a training did not refuse: the comparison is false there.
        stored = self.get(org_id, version)
        customers = stored.row_counts.get("customers", 0) if stored else 0
        return (
            "SET current_version = :v, refused_customers = :customers",
            "attribute_not_exists(current_version) OR "
            "(current_version < :v AND refused_customers <= :customers)",
            {":v": {"S": version}, ":customers": {"N": str(customers)}},
        )

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
