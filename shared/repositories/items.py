"""Converting between Python values and DynamoDB attribute values."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from shared.clock import iso

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.service_resource import Table


def to_item(value: Any) -> Any:
    """Recursively make ``value`` storable: floats become Decimal (one nearer zero than DynamoDB
    stores, 0), datetimes ISO strings, None dropped."""
    if isinstance(value, dict):
        return {k: to_item(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [to_item(v) for v in value]
    if isinstance(value, bool):
        return value
    if isinstance(value, float):
        # DynamoDB stores magnitudes from 1E-130: a float nearer zero (a fuzzer's 5e-324) is stored as 0.
        return Decimal(repr(value)) if value == 0 or abs(value) >= 1e-130 else Decimal(0)
    if isinstance(value, datetime):
        return iso(value)
    return value


def from_item(value: Any) -> Any:
    """Recursively turn DynamoDB Decimals back into int or float."""
    if isinstance(value, dict):
        return {k: from_item(v) for k, v in value.items()}
    if isinstance(value, list):
        return [from_item(v) for v in value]
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    return value


def as_int(value: object) -> int:
    """A stored whole number (DynamoDB returns ``Decimal``) as ``int``."""
    if isinstance(value, bool) or not isinstance(value, int | Decimal):
        raise TypeError(f"expected a stored number, got {type(value).__name__}")
    return int(value)


def parse_time(value: str | None) -> datetime | None:
    """Parse a stored ISO timestamp (``Z`` suffix) or None."""
    return datetime.fromisoformat(value.replace("Z", "+00:00")) if value else None


def query_all(table: Table, **kwargs: Any) -> list[dict[str, Any]]:
    """Every item a DynamoDB ``Query`` matches, following ``LastEvaluatedKey`` across pages."""
    items: list[dict[str, Any]] = []
    while True:
        page = table.query(**kwargs)
        items.extend(page.get("Items", []))
        if "LastEvaluatedKey" not in page:
            return items
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


# BatchGetItem takes at most 100 keys a call.
BATCH_GET_LIMIT = 100


def get_many_consistent(table: Table, keys: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The items at ``keys`` that exist, read with strong consistency (BatchGetItem, 100 at a time,
    unprocessed keys asked again), in no particular order."""
    found: list[dict[str, Any]] = []
    for start in range(0, len(keys), BATCH_GET_LIMIT):
        pending: dict[str, Any] = {
            table.name: {"Keys": keys[start : start + BATCH_GET_LIMIT], "ConsistentRead": True}
        }
        while pending:
            answer = table.meta.client.batch_get_item(RequestItems=pending)
            found.extend(answer.get("Responses", {}).get(table.name, []))
            pending = dict(answer.get("UnprocessedKeys") or {})
    return found
