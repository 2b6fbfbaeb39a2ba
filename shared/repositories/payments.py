"""The hosted checkout's items in the main table, all in the organization's partition (so account
closure's deletion of ``ORG#<org>`` takes every one of them):

| item | sk | lifetime |
|---|---|---|
| the payments connection | ``PAYMENTS`` | until closure (a disconnect keeps it and its account) |
| a checkout a shopper started | ``CHECKOUT#<checkout id>`` | 30 days (TTL), the order stays |
| a checkout ended unpaid, also | gsi1 ``ORG#<org>#UNPAID`` / ``<ended at>#<checkout id>`` | as the checkout |
| an order (a paid checkout) | ``ORDER#<paid at>#<session id>`` | until closure |
| a provider event being or already handled | ``PAYEVENT#<event id>`` | 30 days (TTL) |
| an order's payment, by its PaymentIntent id | ``PAYREF#<payment intent>`` | as the order |
| what was refunded of an order or lost in a dispute, for the sync | ``REFUND#<order id>`` | as the order |

A refund or a dispute names the payment, not the order: its order is found through ``PAYREF``.

Orders sort by the time they were paid, so the newest come first from one query; checkouts that
ended unpaid sort by when they ended in the index, so the latest come first from one query of the
index, however many checkouts the 30 days hold (a sparse index: an open or paid one is not in it).
A payment is recorded in one transaction: the connection is still the one that took it, the
checkout moves to paid (only once, and out of the unpaid index), the order is written; a closure or
a disconnect in between, or a second event about the same session, writes nothing.
"""

from __future__ import annotations

import contextlib
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal

from boto3.dynamodb.conditions import Attr, Key
from boto3.dynamodb.types import TypeSerializer

from shared.clock import iso
from shared.records.payments import CheckoutRecord, DisputeRecord, OrderRecord, PaymentsConnection
from shared.repositories.items import as_int, from_item, query_all, to_item

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_dynamodb.service_resource import Table
    from mypy_boto3_dynamodb.type_defs import TransactWriteItemTypeDef

CHECKOUT_LIFETIME = timedelta(days=30)
# The provider resends an undelivered event for up to three days (docs/payments-notes.md §4.3).
EVENT_CLAIM_LIFETIME = timedelta(days=30)
REFUND_PREFIX = "REFUND#"
_KEYS = {"pk", "sk", "gsi1pk", "gsi1sk", "expires_at", "dispute_position"}

Claim = Literal["claimed", "done", "busy"]
Recorded = Literal["recorded", "already_paid", "connection_gone", "unknown_checkout"]
RefundRecorded = Literal["refund_recorded", "refund_unchanged", "unknown_order"]
DisputeRecorded = Literal["dispute_recorded", "dispute_unchanged", "unknown_order"]


def _pk(org_id: str) -> str:
    return f"ORG#{org_id}"


def _connection_key(org_id: str) -> dict[str, str]:
    return {"pk": _pk(org_id), "sk": "PAYMENTS"}


def _checkout_key(org_id: str, checkout_id: str) -> dict[str, str]:
    return {"pk": _pk(org_id), "sk": f"CHECKOUT#{checkout_id}"}


def _unpaid_index(org_id: str) -> str:
    return f"ORG#{org_id}#UNPAID"


def _order_sk(order: OrderRecord) -> str:
    return f"ORDER#{iso(order.paid_at)}#{order.order_id}"


def _payment_ref_key(org_id: str, payment_intent: str) -> dict[str, str]:
    """Where an order's sort key is found from its payment (a refund names the payment, not the order)."""
    return {"pk": _pk(org_id), "sk": f"PAYREF#{payment_intent}"}


def _payment_ref(order: OrderRecord, order_sk: str, table: str) -> list[Any]:
    """The transaction's Put of the order's ``PAYREF`` item (none for an order without a payment id)."""
    if not order.payment_intent:
        return []
    key = _payment_ref_key(order.org_id, order.payment_intent)
    item = {"pk": {"S": key["pk"]}, "sk": {"S": key["sk"]}, "order_sk": {"S": order_sk}}
    return [{"Put": {"TableName": table, "Item": item}}]


def _fields(item: dict[str, Any]) -> dict[str, Any]:
    fields: dict[str, Any] = from_item({k: v for k, v in item.items() if k not in _KEYS})
    return fields


class DynamoPaymentsStore:
    def __init__(self, table: Table, client: DynamoDBClient) -> None:
        self._table = table
        self._client = client

    # --- the connection -------------------------------------------------------------------------

    def get_connection(self, org_id: str) -> PaymentsConnection | None:
        item = self._table.get_item(Key=_connection_key(org_id), ConsistentRead=True).get("Item")
        return PaymentsConnection.model_validate(_fields(item)) if item else None

    def put_connection(self, connection: PaymentsConnection) -> None:
        """Store the connection whole (there is one per organization)."""
        self._table.put_item(Item={**_connection_key(connection.org_id), **to_item(connection.model_dump())})

    # --- checkouts --------------------------------------------------------------------------------

    def put_checkout(self, record: CheckoutRecord) -> None:
        expires = int((record.created_at + CHECKOUT_LIFETIME).timestamp())
        self._table.put_item(
            Item={
                **_checkout_key(record.org_id, record.checkout_id),
                **to_item(record.model_dump()),
                "expires_at": expires,
            }
        )

    def get_checkout(self, org_id: str, checkout_id: str) -> CheckoutRecord | None:
        item = self._table.get_item(Key=_checkout_key(org_id, checkout_id), ConsistentRead=True).get("Item")
        return CheckoutRecord.model_validate(_fields(item)) if item else None

    def open_checkouts(self, org_id: str) -> list[CheckoutRecord]:
        """The checkouts whose session may still be paid (open, or being created)."""
        items = query_all(
            self._table,
            KeyConditionExpression=Key("pk").eq(_pk(org_id)) & Key("sk").begins_with("CHECKOUT#"),
            FilterExpression=Attr("state").is_in(["open", "creating"]),
            ConsistentRead=True,
        )
        return [CheckoutRecord.model_validate(_fields(item)) for item in items]

    def unpaid_checkouts(self, org_id: str, limit: int) -> list[CheckoutRecord]:
        """The latest ``limit`` checkouts that ended unpaid (expired, or a delayed payment failed) of
        the last 30 days, the latest ended first: one query of the index, reading ``limit`` items."""
        page = self._table.query(
            IndexName="gsi1",
            KeyConditionExpression=Key("gsi1pk").eq(_unpaid_index(org_id)),
            ScanIndexForward=False,
            Limit=limit,
        )
        return [CheckoutRecord.model_validate(_fields(item)) for item in page.get("Items", [])]

    def end_checkout(
        self, org_id: str, checkout_id: str, state: Literal["expired", "failed"], now: datetime
    ) -> bool:
        """Mark an unpaid checkout ``state`` and index it among those ended unpaid; False when it was
        paid (or unknown)."""
        return self._update_checkout(
            org_id,
            checkout_id,
            "SET #state = :state, updated_at = :now, gsi1pk = :index, gsi1sk = :ended",
            {
                ":state": state,
                ":now": iso(now),
                ":paid": "paid",
                ":index": _unpaid_index(org_id),
                ":ended": f"{iso(now)}#{checkout_id}",
            },
            "attribute_exists(pk) AND #state <> :paid",
        )

    def record_refusal(self, org_id: str, checkout_id: str, code: str, now: datetime) -> bool:
        """Count a refused payment attempt on a checkout not yet paid (the session stays open for
        another card); False when it was paid (or unknown)."""
        return self._update_checkout(
            org_id,
            checkout_id,
            "SET failed_attempts = if_not_exists(failed_attempts, :zero) + :one, last_failure = :code, "
            "updated_at = :now",
            {":zero": 0, ":one": 1, ":code": code, ":now": iso(now), ":paid": "paid"},
            "attribute_exists(pk) AND #state <> :paid",
        )

    def _update_checkout(
        self, org_id: str, checkout_id: str, update: str, values: dict[str, Any], condition: str
    ) -> bool:
        try:
            self._table.update_item(
                Key=_checkout_key(org_id, checkout_id),
                UpdateExpression=update,
                ConditionExpression=condition,
                ExpressionAttributeNames={"#state": "state"},
                ExpressionAttributeValues=values,
            )
        except self._table.meta.client.exceptions.ConditionalCheckFailedException:
            return False
        return True

    # --- orders -----------------------------------------------------------------------------------

    def record_paid(self, order: OrderRecord, connection_id: str, now: datetime) -> Recorded:
        """Record ``order`` and its checkout as paid, in one transaction that holds only while the
        organization's payments connection is still ``connection_id`` and the checkout is not yet
        paid. Says what happened."""
        serialize = TypeSerializer().serialize
        table = self._table.name
        pk = {"S": _pk(order.org_id)}
        item = {"pk": _pk(order.org_id), "sk": _order_sk(order), **to_item(order.model_dump())}
        try:
            self._client.transact_write_items(
                TransactItems=[
                    {
                        "ConditionCheck": {
                            "TableName": table,
                            "Key": {"pk": pk, "sk": {"S": "PAYMENTS"}},
                            "ConditionExpression": "connection_id = :connection AND #status <> :inactive",
                            "ExpressionAttributeNames": {"#status": "status"},
                            "ExpressionAttributeValues": {
                                ":connection": {"S": connection_id},
                                ":inactive": {"S": "inactive"},
                            },
                        }
                    },
                    {
                        "Update": {
                            "TableName": table,
                            "Key": {"pk": pk, "sk": {"S": f"CHECKOUT#{order.checkout_id}"}},
                            "UpdateExpression": "SET #state = :paid, updated_at = :now REMOVE gsi1pk, gsi1sk",
                            "ConditionExpression": "attribute_exists(pk) AND #state <> :paid",
                            "ExpressionAttributeNames": {"#state": "state"},
                            "ExpressionAttributeValues": {":paid": {"S": "paid"}, ":now": {"S": iso(now)}},
                        }
                    },
                    {
                        "Put": {
                            "TableName": table,
                            "Item": {k: serialize(v) for k, v in item.items()},
                            "ConditionExpression": "attribute_not_exists(pk)",
                        }
                    },
                    *_payment_ref(order, item["sk"], table),
                ]
            )
        except self._client.exceptions.TransactionCanceledException as cancelled:
            reasons = [r.get("Code") for r in cancelled.response.get("CancellationReasons", [])]
            if reasons and reasons[0] == "ConditionalCheckFailed":
                return "connection_gone"
            checkout = self.get_checkout(order.org_id, order.checkout_id)
            return "unknown_checkout" if checkout is None else "already_paid"
        return "recorded"

    def record_refund(
        self, org_id: str, payment_intent: str, amount_refunded: int, now: datetime
    ) -> RefundRecorded:
        """Record that the provider has refunded ``amount_refunded`` (cumulative, as the charge says)
        of the order paid by ``payment_intent``, on the order and, in the same transaction, in its
        ``REFUND#<order id>`` item (what each sync reads: ``refunded_orders``). Only a larger amount
        replaces the one recorded, so a late or repeated event never takes a refund back. Says what
        happened."""
        order_sk = self._order_sk_paid_by(org_id, payment_intent)
        if order_sk is None:
            return "unknown_order"
        pk, amount = {"S": _pk(org_id)}, {"N": str(amount_refunded)}
        order_id = order_sk.split("#", 2)[2]
        try:
            self._client.transact_write_items(
                TransactItems=[
                    {
                        "Update": {
                            "TableName": self._table.name,
                            "Key": {"pk": pk, "sk": {"S": order_sk}},
                            "UpdateExpression": "SET amount_refunded = :amount, refunded_at = :now",
                            "ConditionExpression": "attribute_exists(pk) AND "
                            "(attribute_not_exists(amount_refunded) OR amount_refunded < :amount)",
                            "ExpressionAttributeValues": {":amount": amount, ":now": {"S": iso(now)}},
                        }
                    },
                    # An update, not a put: a lost dispute's amount may be on the item already.
                    _taken_back(self._table.name, pk, order_id, "amount_refunded", amount),
                ]
            )
        except self._client.exceptions.TransactionCanceledException as cancelled:
            reasons = [r.get("Code") for r in cancelled.response.get("CancellationReasons", [])]
            if reasons and reasons[0] == "ConditionalCheckFailed":
                return "refund_unchanged"
            raise  # a conflict with another write: the event is delivered again
        return "refund_recorded"

    def refunded_orders(self, org_id: str) -> dict[str, int]:
        """What the merchant no longer has of each such order (by order id, in the currency's smallest
        unit): what the provider refunded (cumulative) and what a lost dispute took back. One query
        of the ``REFUND#`` items, one per order refunded or lost in a dispute."""
        items = query_all(
            self._table,
            KeyConditionExpression=Key("pk").eq(_pk(org_id)) & Key("sk").begins_with(REFUND_PREFIX),
            ConsistentRead=True,
        )
        return {
            str(item["order_id"]): as_int(item.get("amount_refunded", 0))
            + as_int(item.get("amount_disputed_lost", 0))
            for item in items
        }

    def record_dispute(self, org_id: str, payment_intent: str, dispute: DisputeRecord) -> DisputeRecorded:
        """Record ``dispute`` (its latest state, as an event about it says) on the order paid by
        ``payment_intent``. Only a state standing higher (``DisputeRecord.position``: a later stage, or
        a later dispute) replaces the one recorded, so a late or repeated event never moves it back.
        Says what happened."""
        order_sk = self._order_sk_paid_by(org_id, payment_intent)
        if order_sk is None:
            return "unknown_order"
        serialize = TypeSerializer().serialize
        pk = {"S": _pk(org_id)}
        record: TransactWriteItemTypeDef = {
            "Update": {
                "TableName": self._table.name,
                "Key": {"pk": pk, "sk": {"S": order_sk}},
                "UpdateExpression": "SET dispute = :dispute, dispute_position = :position",
                "ConditionExpression": "attribute_exists(pk) AND "
                "(attribute_not_exists(dispute_position) OR dispute_position < :position)",
                "ExpressionAttributeValues": {
                    ":dispute": serialize(to_item(dispute.model_dump())),
                    ":position": serialize(dispute.position()),
                },
            }
        }
        writes = [record]
        if dispute.status == "lost":
            # The bank gave the buyer the disputed amount back: the sync takes it off as a refund's.
            lost = {"N": str(dispute.amount)}
            writes.append(
                _taken_back(self._table.name, pk, order_sk.split("#", 2)[2], "amount_disputed_lost", lost)
            )
        try:
            self._client.transact_write_items(TransactItems=writes)
        except self._client.exceptions.TransactionCanceledException as cancelled:
            reasons = [r.get("Code") for r in cancelled.response.get("CancellationReasons", [])]
            if reasons and reasons[0] == "ConditionalCheckFailed":
                return "dispute_unchanged"
            raise  # a conflict with another write: the event is delivered again
        return "dispute_recorded"

    def _order_sk_paid_by(self, org_id: str, payment_intent: str) -> str | None:
        """The sort key of the order ``payment_intent`` paid, from its ``PAYREF`` item (None: no order
        of the organization was paid by it, or it was paid before orders kept one)."""
        ref = self._table.get_item(Key=_payment_ref_key(org_id, payment_intent), ConsistentRead=True).get(
            "Item"
        )
        return None if ref is None else str(ref["order_sk"])

    def list_orders(self, org_id: str, limit: int) -> list[OrderRecord]:
        """The organization's newest ``limit`` orders, newest first."""
        page = self._table.query(
            KeyConditionExpression=Key("pk").eq(_pk(org_id)) & Key("sk").begins_with("ORDER#"),
            ScanIndexForward=False,
            Limit=limit,
        )
        return [OrderRecord.model_validate(_fields(item)) for item in page.get("Items", [])]

    def orders_paid_between(self, org_id: str, start: datetime | None, end: datetime) -> list[OrderRecord]:
        """The orders paid in ``[start, end)`` (from the first when ``start`` is None), oldest first."""
        low = f"ORDER#{iso(start)}" if start else "ORDER#"
        condition = Key("pk").eq(_pk(org_id)) & Key("sk").between(low, f"ORDER#{iso(end)}")
        items = query_all(self._table, KeyConditionExpression=condition, ConsistentRead=True)
        orders = [OrderRecord.model_validate(_fields(item)) for item in items]
        return [order for order in orders if order.paid_at < end]

    def claim_pixel_count(self, order: OrderRecord, source: str, claim: str | None = None) -> bool:
        """Mark ``order``'s Purchase as counted on the Events page under ``source``; False when a
        source already counted it (or there is no such order). The first sender counts it.

        ``claim`` names the claimant (a sync's batch: its version and position): a claim made under
        the same name before is the caller's own (a step killed after claiming, before its count was
        written, sends the batch again) and answers True again."""
        values = {":source": source}
        condition = "attribute_exists(pk) AND attribute_not_exists(pixel_counted_by)"
        update = "SET pixel_counted_by = :source"
        if claim is not None:
            values[":claim"] = claim
            condition = (
                "attribute_exists(pk) AND (attribute_not_exists(pixel_counted_by) OR pixel_claim = :claim)"
            )
            update += ", pixel_claim = :claim"
        try:
            self._table.update_item(
                Key={"pk": _pk(order.org_id), "sk": _order_sk(order)},
                UpdateExpression=update,
                ConditionExpression=condition,
                ExpressionAttributeValues=values,
            )
        except self._table.meta.client.exceptions.ConditionalCheckFailedException:
            return False
        return True

    # --- provider events --------------------------------------------------------------------------

    def claim_event(self, org_id: str, event_id: str, now: datetime, lease: timedelta) -> Claim:
        """Claim the provider's event ``event_id`` before acting on it: ``claimed`` (act, then
        ``complete_event``), ``done`` (handled already: acknowledge and ignore) or ``busy`` (another
        delivery holds it, its lease not yet run out: answer so the provider sends it again). A claim
        whose holder died is taken over once its lease runs out."""
        key = {"pk": _pk(org_id), "sk": f"PAYEVENT#{event_id}"}
        try:
            self._table.put_item(
                Item={
                    **key,
                    "event_id": event_id,
                    "state": "processing",
                    "lease_until": iso(now + lease),
                    "expires_at": int((now + EVENT_CLAIM_LIFETIME).timestamp()),
                },
                ConditionExpression=(
                    "attribute_not_exists(pk) OR (#state = :processing AND lease_until < :now)"
                ),
                ExpressionAttributeNames={"#state": "state"},
                ExpressionAttributeValues={":processing": "processing", ":now": iso(now)},
            )
        except self._table.meta.client.exceptions.ConditionalCheckFailedException:
            held = self._table.get_item(Key=key, ConsistentRead=True).get("Item") or {}
            return "done" if held.get("state") == "done" else "busy"
        return "claimed"

    def complete_event(self, org_id: str, event_id: str, now: datetime) -> None:
        self._table.update_item(
            Key={"pk": _pk(org_id), "sk": f"PAYEVENT#{event_id}"},
            UpdateExpression="SET #state = :done, handled_at = :now REMOVE lease_until",
            ExpressionAttributeNames={"#state": "state"},
            ExpressionAttributeValues={":done": "done", ":now": iso(now)},
        )

    def release_event(self, org_id: str, event_id: str) -> None:
        """Give a claim back after a failure, so the provider's next delivery acts on it (a claim
        already done stays)."""
        with contextlib.suppress(self._table.meta.client.exceptions.ConditionalCheckFailedException):
            self._table.delete_item(
                Key={"pk": _pk(org_id), "sk": f"PAYEVENT#{event_id}"},
                ConditionExpression="#state = :processing",
                ExpressionAttributeNames={"#state": "state"},
                ExpressionAttributeValues={":processing": "processing"},
            )


def _taken_back(
    table: str, pk: dict[str, str], order_id: str, field: str, amount: dict[str, str]
) -> TransactWriteItemTypeDef:
    """The transaction's write of what the merchant no longer has of an order (``REFUND#<order id>``):
    ``field`` (``amount_refunded`` or ``amount_disputed_lost``) set to ``amount``, the other kept."""
    return {
        "Update": {
            "TableName": table,
            "Key": {"pk": pk, "sk": {"S": f"{REFUND_PREFIX}{order_id}"}},
            "UpdateExpression": "SET order_id = :order, #field = :amount",
            "ExpressionAttributeNames": {"#field": field},
            "ExpressionAttributeValues": {":order": {"S": order_id}, ":amount": amount},
        }
    }
