"""Organizations and which organization a dashboard user belongs to."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from shared.clock import iso

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.service_resource import Table


class DynamoOrganizationStore:
    def __init__(self, table: Table) -> None:
        self._table = table

    def create(self, org_id: str, name: str, now: datetime) -> None:
        """Create an organization; an existing one is left as it is (safe to repeat)."""
        try:
            self._table.put_item(
                Item={
                    "pk": f"ORG#{org_id}",
                    "sk": "META",
                    "org_id": org_id,
                    "name": name,
                    "created_at": iso(now),
                },
                ConditionExpression="attribute_not_exists(pk)",
            )
        except self._table.meta.client.exceptions.ConditionalCheckFailedException:
            return

    def add_member(self, user_id: str, org_id: str, email: str | None = None) -> None:
        """Attach dashboard user ``user_id`` (the JWT ``sub``) to ``org_id``."""
        item = {"pk": f"USER#{user_id}", "sk": "META", "org_id": org_id, "user_id": user_id}
        if email:
            item["email"] = email
        self._table.put_item(Item=item)

    def org_of(self, user_id: str) -> str | None:
        """The organization of a dashboard user, or None if the user has none."""
        item = self._table.get_item(Key={"pk": f"USER#{user_id}", "sk": "META"}).get("Item")
        return str(item["org_id"]) if item else None

    def was_closed(self, user_id: str) -> bool:
        """Whether the user's organization was closed recently (account closure's marker, kept 7
        days): asked only of a user who has no organization."""
        item = self._table.get_item(Key={"pk": f"USER#{user_id}", "sk": "CLOSED"}).get("Item")
        return item is not None

    def name_of(self, org_id: str) -> str | None:
        """The organization's name, or None if there is no such organization."""
        item = self._table.get_item(Key={"pk": f"ORG#{org_id}", "sk": "META"}, ConsistentRead=True).get(
            "Item"
        )
        return str(item["name"]) if item and "name" in item else None
