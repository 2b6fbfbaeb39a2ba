"""Audience records in DynamoDB (``ORG#<org>`` / ``AUDIENCE#<id>``), plus a pointer item per
idempotency key so a retried request finds the audience it already started."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from boto3.dynamodb.conditions import Key

from shared.records.audiences import AudienceRecord
from shared.repositories.items import from_item, query_all, to_item

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.service_resource import Table


class DynamoAudienceStore:
    def __init__(self, table: Table) -> None:
        self._table = table

    def put(self, record: AudienceRecord) -> None:
        item = {"pk": f"ORG#{record.org_id}", "sk": f"AUDIENCE#{record.audience_id}"}
        self._table.put_item(Item={**item, **to_item(record.model_dump())})

    def start_publication(self, record: AudienceRecord) -> bool:
        """Save ``record`` with its new publication unless another one was started meanwhile (one
        that was rolled back may be replaced). False when another request got there first."""
        item = {"pk": f"ORG#{record.org_id}", "sk": f"AUDIENCE#{record.audience_id}"}
        try:
            self._table.put_item(
                Item={**item, **to_item(record.model_dump())},
                ConditionExpression="attribute_not_exists(publication) OR publication.#state = :replaceable",
                ExpressionAttributeNames={"#state": "state"},
                ExpressionAttributeValues={":replaceable": "rolled_back"},
            )
        except self._table.meta.client.exceptions.ConditionalCheckFailedException:
            return False
        return True

    def claim_key(self, org_id: str, idempotency_key: str, audience_id: str) -> str:
        """Bind ``idempotency_key`` to ``audience_id`` unless it is bound already; returns the bound id."""
        key = {"pk": f"ORG#{org_id}", "sk": f"AUDIENCEKEY#{idempotency_key}"}
        try:
            self._table.put_item(
                Item={**key, "audience_id": audience_id}, ConditionExpression="attribute_not_exists(pk)"
            )
        except self._table.meta.client.exceptions.ConditionalCheckFailedException:
            item = self._table.get_item(Key=key, ConsistentRead=True)["Item"]
            return str(item["audience_id"])
        return audience_id

    def get(self, org_id: str, audience_id: str) -> AudienceRecord | None:
        item = self._table.get_item(
            Key={"pk": f"ORG#{org_id}", "sk": f"AUDIENCE#{audience_id}"}, ConsistentRead=True
        ).get("Item")
        return _to_record(item) if item else None

    def list_for_org(self, org_id: str) -> list[AudienceRecord]:
        condition = Key("pk").eq(f"ORG#{org_id}") & Key("sk").begins_with("AUDIENCE#")
        return [_to_record(i) for i in query_all(self._table, KeyConditionExpression=condition)]

    def delete(self, record: AudienceRecord) -> None:
        self._table.delete_item(Key={"pk": f"ORG#{record.org_id}", "sk": f"AUDIENCE#{record.audience_id}"})
        if record.idempotency_key:
            self._table.delete_item(
                Key={"pk": f"ORG#{record.org_id}", "sk": f"AUDIENCEKEY#{record.idempotency_key}"}
            )


def _to_record(item: dict[str, Any]) -> AudienceRecord:
    return AudienceRecord.model_validate(from_item({k: v for k, v in item.items() if k not in {"pk", "sk"}}))
