"""Prediction usage counters in the usage table: one item per API key and UTC day.

| item | pk | sk |
|---|---|---|
| one key's usage on one day | ``ORG#<org>#KEY#<key_id>`` | ``DAY#<yyyy-mm-dd>`` |

The item holds the per-key/day counter ``predictions`` and, as top-level attributes
``model#<name>``, the per-key/model/day counters, plus the key's prefix and label at the time of use
(billing metadata). Keeping both counters on one item is what makes metering exact: one UpdateItem
with ``ADD`` increments both atomically, and the quota condition is checked on the same write, so
there is no window between "check" and "count" and no transaction to conflict under load. The
per-model counters are top-level attributes rather than a map because ``ADD`` cannot create a map
and a key inside it in one expression. Partitioning by key (not by organization) spreads a busy
organization's writes over as many partitions as it has keys.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import TYPE_CHECKING, Any

from shared.clock import iso
from shared.records.principals import ApiKeyPrincipal
from shared.records.usage import KeyUsageDay
from shared.repositories.items import as_int, parse_time, query_all

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.service_resource import Table

MODEL_ATTRIBUTE_PREFIX = "model#"


class DynamoUsageStore:
    def __init__(self, table: Table) -> None:
        self._table = table

    def add_prediction(
        self, principal: ApiKeyPrincipal, model_name: str, day: date, now: datetime, *, limit: int | None
    ) -> int | None:
        """Count one prediction of ``model_name`` for the principal's key on ``day``.

        With a ``limit`` the count is only made while the key's count for the day is below it.
        Returns the key's new count for the day, or None when the limit was already reached (nothing
        was counted).
        """
        kwargs: dict[str, Any] = {
            "Key": {"pk": _pk(principal.org_id, principal.key_id), "sk": _sk(day)},
            "UpdateExpression": (
                "ADD predictions :one, #model :one "
                "SET org_id = :org, key_id = :key, prefix = :prefix, label = :label, "
                "#day = :day, last_used_at = :now"
            ),
            "ExpressionAttributeNames": {"#model": MODEL_ATTRIBUTE_PREFIX + model_name, "#day": "day"},
            "ExpressionAttributeValues": {
                ":one": 1,
                ":org": principal.org_id,
                ":key": principal.key_id,
                ":prefix": principal.prefix,
                ":label": principal.label,
                ":day": day.isoformat(),
                ":now": iso(now),
            },
            "ReturnValues": "UPDATED_NEW",
        }
        if limit is not None:
            kwargs["ConditionExpression"] = "attribute_not_exists(predictions) OR predictions < :limit"
            kwargs["ExpressionAttributeValues"][":limit"] = limit
        try:
            result = self._table.update_item(**kwargs)
        except self._table.meta.client.exceptions.ConditionalCheckFailedException:
            return None
        return as_int(result["Attributes"]["predictions"])

    def days_for_key(
        self, org_id: str, key_id: str, period: tuple[date, date] | None = None
    ) -> list[KeyUsageDay]:
        """A key's usage per day, oldest first: every day it was used, or only the days of ``period``
        (first and last day, both inclusive)."""
        # boto3 is imported where a query needs it, not by the predict function (botocore only).
        from boto3.dynamodb.conditions import Key

        days = Key("sk").between(_sk(period[0]), _sk(period[1])) if period else Key("sk").begins_with("DAY#")
        items = query_all(self._table, KeyConditionExpression=Key("pk").eq(_pk(org_id, key_id)) & days)
        # A day the key was revoked on before any use has an item and no predictions: not a day of use.
        return [_to_day(i) for i in items if "predictions" in i]


def usage_day_key(org_id: str, key_id: str, day: date) -> tuple[str, str]:
    """The (pk, sk) of a key's item for one UTC day."""
    return _pk(org_id, key_id), _sk(day)


def _pk(org_id: str, key_id: str) -> str:
    return f"ORG#{org_id}#KEY#{key_id}"


def _sk(day: date) -> str:
    return f"DAY#{day.isoformat()}"


def _to_day(item: dict[str, Any]) -> KeyUsageDay:
    return KeyUsageDay(
        org_id=item["org_id"],
        key_id=item["key_id"],
        prefix=item["prefix"],
        label=item.get("label", ""),
        day=date.fromisoformat(item["day"]),
        predictions=int(item["predictions"]),
        by_model={
            name.removeprefix(MODEL_ATTRIBUTE_PREFIX): int(count)
            for name, count in item.items()
            if name.startswith(MODEL_ATTRIBUTE_PREFIX)
        },
        last_used_at=parse_time(item.get("last_used_at")),
    )
