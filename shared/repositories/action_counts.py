"""Each organization's starts of an expensive action per fixed window (``shared.limits.actions``):
one item per organization, action and window, ``ORG#<org>`` / ``LIMIT#<action>#<window>``, holding
``used``. DynamoDB's TTL (``expires_at``) removes the items of past windows; an account closure
deletes them with the rest of the ``ORG#`` partition."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.service_resource import Table


class DynamoActionCounts:
    def __init__(self, table: Table) -> None:
        self._table = table

    def spend(self, org_id: str, action: str, window: int, limit: int, expires_at: int) -> bool:
        """Count one start in one conditional UpdateItem: the condition and the count are one write,
        so concurrent requests of one organization (in any container) never count past ``limit``.
        False when the window already holds ``limit`` starts (nothing written)."""
        refusal = self._table.meta.client.exceptions.ConditionalCheckFailedException
        try:
            self._table.update_item(
                Key={"pk": f"ORG#{org_id}", "sk": f"LIMIT#{action}#{window}"},
                UpdateExpression="ADD used :one SET expires_at = :expires",
                ConditionExpression="attribute_not_exists(used) OR used < :limit",
                ExpressionAttributeValues={":one": 1, ":limit": limit, ":expires": expires_at},
            )
        except refusal:
            return False
        return True
