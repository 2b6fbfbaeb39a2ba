"""Model records in DynamoDB, and the atomic usage counters on them."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from boto3.dynamodb.conditions import Key

from shared.clock import iso
from shared.predictions.records import ModelRecord
from shared.repositories.records import from_item, query_all, to_item


class DynamoModelStore:
    def __init__(self, table: Any) -> None:
        self._table = table

    def put(self, record: ModelRecord) -> None:
        """Store (or replace with a newer version) a model record, keeping its usage counters."""
        existing = self.get(record.org_id, record.name)
        if existing is not None:
            record = record.model_copy(
                update={
                    "usageStats": existing.usageStats,
                    "last_prediction_date": existing.last_prediction_date,
                }
            )
        item = to_item(record.model_dump())
        self._table.put_item(Item={"pk": f"ORG#{record.org_id}", "sk": f"MODEL#{record.name}", **item})

    def get(self, org_id: str, name: str) -> ModelRecord | None:
        item = self._table.get_item(Key={"pk": f"ORG#{org_id}", "sk": f"MODEL#{name}"}).get("Item")
        return _to_record(item) if item else None

    def list_for_org(self, org_id: str) -> list[ModelRecord]:
        """All models of an organization, by name."""
        condition = Key("pk").eq(f"ORG#{org_id}") & Key("sk").begins_with("MODEL#")
        return [_to_record(i) for i in query_all(self._table, KeyConditionExpression=condition)]

    def record_prediction(self, org_id: str, name: str, now: datetime) -> int:
        """Atomically add one prediction to the model's counter; returns the new total.

        A single UpdateItem with ADD is atomic in DynamoDB, so no increment is lost under concurrency.
        """
        result = self._table.update_item(
            Key={"pk": f"ORG#{org_id}", "sk": f"MODEL#{name}"},
            UpdateExpression="ADD usageStats.total_predictions :one SET last_prediction_date = :now",
            ConditionExpression="attribute_exists(pk)",
            ExpressionAttributeValues={":one": 1, ":now": iso(now)},
            ReturnValues="UPDATED_NEW",
        )
        return int(result["Attributes"]["usageStats"]["total_predictions"])


def _to_record(item: dict[str, Any]) -> ModelRecord:
    data = from_item({k: v for k, v in item.items() if k not in {"pk", "sk"}})
    return ModelRecord.model_validate(data)
