"""What the predict function reads and writes in DynamoDB, on the low-level client (no boto3
resource layer on its cold path). A warm prediction makes exactly two calls, both writes:

1. **The key's day item** (usage table, ``ORG#<org>#KEY#<key_id>`` / ``DAY#<yyyy-mm-dd>``, the item
   ``shared.repositories.usage`` reads back for reports) is also where a warm prediction is
   *authorised*: the first use of the day seeds it from the key record (``active``, ``daily_quota``),
   revoking a key marks it ``revoked_at``, so one conditional UpdateItem refuses a revoked key,
   enforces the quota and counts the use (key total and ``model#<name>``) at once, with no window
   between check and count. The key's secret hash never changes, so it is verified against the key
   record cached per container; only revocation can change a key, and it is checked on this write.
2. **The model's counters** (main table, the model record): one UpdateItem that adds the prediction
   and is conditional on the model version and revision the container has cached (every change of
   the record, a new version or a drift check, adds one to ``revision``), so it also *revalidates*
   the cached record: after a change DynamoDB hands the current item back.

Both are single-item UpdateItems: atomic under concurrency, and no transaction to conflict on a busy
key or model. The reads (the key record, the model record) happen once per container, and again only
when a write says the cached copy is out of date.
"""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from shared.clock import iso
from shared.records.api_keys import StoredApiKey
from shared.records.principals import ApiKeyPrincipal
from shared.records.usage import DayCount, DayStanding
from shared.repositories.api_keys import api_key_from_item
from shared.repositories.items import from_item
from shared.repositories.models import model_record_from_item
from shared.repositories.usage import MODEL_ATTRIBUTE_PREFIX, usage_day_key

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

    from shared.records.models import ModelRecord


class DynamoKeyDayMeter:
    """Counts predictions on the key's day item in the usage table (see the module docstring)."""

    def __init__(self, client: DynamoDBClient, table_name: str) -> None:
        self._client = client
        self._table = table_name

    def count(self, key: ApiKeyPrincipal, model_name: str, day: date, now: datetime) -> DayCount:
        """Count one prediction of ``model_name`` on the key's item for ``day`` if that item was
        seeded, the key is not revoked and its quota (as seeded) is not spent."""
        return self._update(key, model_name, day, now, seed=False)

    def seed_and_count(self, key: ApiKeyPrincipal, model_name: str, day: date, now: datetime) -> DayCount:
        """The day's first use: mark the item active with the key's quota (the caller has just read
        the key record and found it not revoked) and count, unless a revocation got there first."""
        return self._update(key, model_name, day, now, seed=True)

    def standing(self, key: ApiKeyPrincipal, day: date) -> DayStanding:
        """The key's day item as it is (strongly consistent), counting nothing: for a request
        refused before it could be counted, whose caller must first learn that its key is revoked
        or its quota spent."""
        item = (
            self._client.get_item(
                TableName=self._table,
                Key=_day_key(key, day),
                ConsistentRead=True,
                ProjectionExpression="active, revoked_at, predictions, daily_quota",
            ).get("Item")
            or {}
        )
        quota = item.get("daily_quota")
        return DayStanding(
            seeded="active" in item,
            revoked="revoked_at" in item,
            predictions=int(item["predictions"]["N"]) if "predictions" in item else 0,
            daily_quota=int(quota["N"]) if quota else None,
        )

    def mark_revoked(self, key: StoredApiKey, days: list[date], revoked_at: datetime) -> None:
        """Mark the key's items for ``days`` revoked (creating them if need be), so the next
        prediction on them is refused."""
        for day in days:
            self._client.update_item(
                TableName=self._table,
                Key=_day_key(key, day),
                UpdateExpression=(
                    "SET revoked_at = if_not_exists(revoked_at, :at), org_id = :org, key_id = :key, "
                    "prefix = :prefix, label = :label, #day = :day"
                ),
                ExpressionAttributeNames={"#day": "day"},
                ExpressionAttributeValues={
                    ":at": {"S": iso(revoked_at)},
                    ":org": {"S": key.org_id},
                    ":key": {"S": key.key_id},
                    ":prefix": {"S": key.prefix},
                    ":label": {"S": key.label},
                    ":day": {"S": day.isoformat()},
                },
            )

    def _update(
        self, key: ApiKeyPrincipal, model_name: str, day: date, now: datetime, *, seed: bool
    ) -> DayCount:
        names = {"#model": MODEL_ATTRIBUTE_PREFIX + model_name, "#day": "day"}
        values: dict[str, Any] = {
            ":one": {"N": "1"},
            ":org": {"S": key.org_id},
            ":key": {"S": key.key_id},
            ":prefix": {"S": key.prefix},
            ":label": {"S": key.label},
            ":day": {"S": day.isoformat()},
            ":now": {"S": iso(now)},
        }
        assignments = (
            "org_id = :org, key_id = :key, prefix = :prefix, label = :label, #day = :day, last_used_at = :now"
        )
        quota = (
            "(attribute_not_exists(daily_quota) OR attribute_not_exists(predictions) "
            "OR predictions < daily_quota)"
        )
        if seed:
            assignments += ", active = :true"
            values[":true"] = {"BOOL": True}
            if key.daily_quota is not None:
                assignments += ", daily_quota = :quota"
                values[":quota"] = {"N": str(key.daily_quota)}
                quota = "(attribute_not_exists(predictions) OR predictions < :quota)"
            condition = f"attribute_not_exists(revoked_at) AND {quota}"
        else:
            condition = f"active = :true AND attribute_not_exists(revoked_at) AND {quota}"
            values[":true"] = {"BOOL": True}
        try:
            result = self._client.update_item(
                TableName=self._table,
                Key=_day_key(key, day),
                UpdateExpression=f"ADD predictions :one, #model :one SET {assignments}",
                ConditionExpression=condition,
                ExpressionAttributeNames=names,
                ExpressionAttributeValues=values,
                ReturnValues="UPDATED_NEW",
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except self._client.exceptions.ConditionalCheckFailedException as refused:
            old = refused.response.get("Item") or {}
            if "revoked_at" in old:
                return DayCount(counted=None, revoked=True)
            if not seed and "active" not in old:
                return DayCount(counted=None, unseeded=True)
            return DayCount(counted=None, over_quota=True)
        return DayCount(counted=int(result["Attributes"]["predictions"]["N"]))


class DynamoKeyReader:
    """Reads an API key record (strongly consistent: it decides whether a day's item is seeded)."""

    def __init__(self, client: DynamoDBClient, table_name: str) -> None:
        self._client = client
        self._table = table_name

    def get(self, key_id: str) -> StoredApiKey | None:
        item = self._client.get_item(
            TableName=self._table,
            Key={"pk": {"S": f"APIKEY#{key_id}"}, "sk": {"S": "META"}},
            ConsistentRead=True,
        ).get("Item")
        return api_key_from_item(_plain(item)) if item else None


class DynamoModelCounter:
    """Reads model records and counts predictions on them, conditional on the version the caller
    scored with."""

    def __init__(self, client: DynamoDBClient, table_name: str) -> None:
        self._client = client
        self._table = table_name

    def get(self, org_id: str, name: str) -> ModelRecord | None:
        item = self._client.get_item(TableName=self._table, Key=_model_key(org_id, name)).get("Item")
        return model_record_from_item(from_item(_plain(item))) if item else None

    def count(self, cached: ModelRecord, now: datetime, *, add: int = 1) -> ModelRecord | None:
        """Add ``add`` predictions (a negative number takes back a refused call's count) to the
        model, if it is still as ``cached`` (same version and revision), and set its
        ``last_prediction_date`` (only when adding).

        Out: None when counted; otherwise nothing was counted and the model's current record is
        returned, or ``LookupError`` is raised when the model no longer exists.
        """
        update = "ADD usageStats.total_predictions :n"
        values: dict[str, Any] = {":n": {"N": str(add)}, ":version": {"S": cached.version}}
        condition = "#version = :version AND "
        if cached.revision == 0:  # a record stored before revisions were counted
            condition += "attribute_not_exists(revision)"
        else:
            condition += "revision = :revision"
            values[":revision"] = {"N": str(cached.revision)}
        if add > 0:
            update += " SET last_prediction_date = :now"
            values[":now"] = {"S": iso(now)}
        try:
            self._client.update_item(
                TableName=self._table,
                Key=_model_key(cached.org_id, cached.name),
                UpdateExpression=update,
                ConditionExpression=condition,
                ExpressionAttributeNames={"#version": "version"},
                ExpressionAttributeValues=values,
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except self._client.exceptions.ConditionalCheckFailedException as refused:
            current = refused.response.get("Item")
            if not current:
                raise LookupError(cached.name) from None
            return model_record_from_item(from_item(_plain(current)))
        return None


def _model_key(org_id: str, name: str) -> dict[str, Any]:
    return {"pk": {"S": f"ORG#{org_id}"}, "sk": {"S": f"MODEL#{name}"}}


def _day_key(key: ApiKeyPrincipal | StoredApiKey, day: date) -> dict[str, Any]:
    pk, sk = usage_day_key(key.org_id, key.key_id, day)
    return {"pk": {"S": pk}, "sk": {"S": sk}}


def _plain(item: dict[str, Any]) -> dict[str, Any]:
    """A low-level item as the resource layer would return it (numbers as Decimal), without
    importing boto3 (the predict function loads botocore only)."""
    return {name: _value(value) for name, value in item.items()}


def _value(attribute: dict[str, Any]) -> Any:
    [(kind, value)] = attribute.items()
    if kind == "S" or kind == "B":
        return value
    if kind == "N":
        return Decimal(value)
    if kind == "BOOL":
        return bool(value)
    if kind == "NULL":
        return None
    if kind == "M":
        return {k: _value(v) for k, v in value.items()}
    if kind == "L":
        return [_value(v) for v in value]
    if kind == "SS" or kind == "BS":
        return set(value)
    if kind == "NS":
        return {Decimal(v) for v in value}
    raise ValueError(f"unknown DynamoDB attribute type {kind}")
