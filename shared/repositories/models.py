"""Model records in DynamoDB, and the atomic usage counters on them."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from shared.clock import iso
from shared.errors import Conflict
from shared.records.models import ModelRecord
from shared.repositories.items import as_int, from_item, query_all, to_item

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.service_resource import Table


def _key(org_id: str, name: str) -> dict[str, str]:
    return {"pk": f"ORG#{org_id}", "sk": f"MODEL#{name}"}


class DynamoModelStore:
    def __init__(self, table: Table) -> None:
        self._table = table

    def put(self, record: ModelRecord) -> None:
        """Store (or replace with a newer version) a model record, keeping its usage counters.

        One UpdateItem sets every other attribute (removing those the record leaves empty) and
        touches the counters only to create them on a new model, so predictions counted while a new
        version is registered are never overwritten, as a read-then-put would overwrite them.
        """
        fields = record.model_dump(exclude={"usageStats", "last_prediction_date", "revision"})
        kept = [name for name, value in fields.items() if value is not None]
        cleared = [name for name, value in fields.items() if value is None]
        alias = {name: f"#f{i}" for i, name in enumerate(kept + cleared)}
        assignments = [f"{alias[name]} = :f{i}" for i, name in enumerate(kept)]
        values = {f":f{i}": to_item(fields[name]) for i, name in enumerate(kept)}
        assignments.append("usageStats = if_not_exists(usageStats, :usage)")
        values[":usage"] = to_item(record.usageStats.model_dump())
        if record.last_prediction_date is not None:
            assignments.append("last_prediction_date = if_not_exists(last_prediction_date, :last)")
            values[":last"] = iso(record.last_prediction_date)
        expression = "SET " + ", ".join(assignments)
        if cleared:
            expression += " REMOVE " + ", ".join(alias[name] for name in cleared)
        expression += " ADD revision :one"
        values[":one"] = 1
        self._table.update_item(
            Key=_key(record.org_id, record.name),
            UpdateExpression=expression,
            ExpressionAttributeNames={placeholder: name for name, placeholder in alias.items()},
            ExpressionAttributeValues=values,
        )

    def get(self, org_id: str, name: str) -> ModelRecord | None:
        item = self._table.get_item(Key=_key(org_id, name)).get("Item")
        return _to_record(item) if item else None

    def list_for_org(self, org_id: str) -> list[ModelRecord]:
        """All models of an organization, by name."""
        # boto3 is imported where a query needs it, not by the predict function (botocore only).
        from boto3.dynamodb.conditions import Key

        condition = Key("pk").eq(f"ORG#{org_id}") & Key("sk").begins_with("MODEL#")
        return [_to_record(i) for i in query_all(self._table, KeyConditionExpression=condition)]

    def record_prediction(self, org_id: str, name: str, now: datetime) -> int:
        """Atomically add one prediction to the model's counter; returns the new total.

        A single UpdateItem with ADD is atomic in DynamoDB, so no increment is lost under concurrency.
        """
        result = self._table.update_item(
            Key=_key(org_id, name),
            UpdateExpression="ADD usageStats.total_predictions :one SET last_prediction_date = :now",
            ConditionExpression="attribute_exists(pk)",
            ExpressionAttributeValues={":one": 1, ":now": iso(now)},
            ReturnValues="UPDATED_NEW",
        )
        return as_int(from_item(result["Attributes"])["usageStats"]["total_predictions"])

    def record_drift(
        self,
        org_id: str,
        name: str,
        version: str,
        *,
        max_feature_psi: float,
        feature_psi: dict[str, float],
        checked_at: datetime,
    ) -> None:
        """Store a drift measurement on version ``version`` of the model, leaving everything else
        (usage counters included) untouched.

        Raises ``Conflict`` when the model is gone or now at another version: the measurement was made
        against the old version's reference and says nothing about the new one.
        """
        try:
            self._table.update_item(
                Key=_key(org_id, name),
                UpdateExpression=(
                    "SET max_feature_psi = :max, feature_psi = :psi, drift_checked_at = :at ADD revision :one"
                ),
                ConditionExpression="attribute_exists(pk) AND #version = :version",
                ExpressionAttributeNames={"#version": "version"},
                ExpressionAttributeValues=to_item(
                    {
                        ":max": max_feature_psi,
                        ":psi": feature_psi,
                        ":at": checked_at,
                        ":version": version,
                        ":one": 1,
                    }
                ),
            )
        except self._table.meta.client.exceptions.ConditionalCheckFailedException:
            raise Conflict(
                f"Model '{name}' is no longer at version {version}; the drift measured against that "
                "version was not stored.",
                remedy="Run the drift check again against the current version.",
            ) from None


def model_record_from_item(item: dict[str, Any]) -> ModelRecord:
    """The record of a stored model item (numbers already plain, key attributes ignored)."""
    return _to_record(item)


def _to_record(item: dict[str, Any]) -> ModelRecord:
    data = from_item({k: v for k, v in item.items() if k not in {"pk", "sk"}})
    return ModelRecord.model_validate(data)
