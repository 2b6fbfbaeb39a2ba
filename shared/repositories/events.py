"""Conversion events in DynamoDB: one item per dataset version's purchases (``PURCHASES#<version>``)
and one pointer item (``EVENTS``) naming the version whose purchases were last sent in full.

A batch's progress (its ``position`` moved past the batch) and its counts on the organization's day
(``EVENTSDAY#<date>``) are written in one transaction (``put_purchases_counted``): no kill between two
writes can leave the batch done but uncounted.

The pointer only moves forward, conditionally, in the same transaction that marks a version sent, so a
late step of an older version can never move it back.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from boto3.dynamodb.types import TypeDeserializer
from botocore.exceptions import ClientError

from shared.records.events import EventDay, EventSite, PurchaseSend, SiteAdmission, StoredRejection
from shared.repositories.items import from_item, to_item

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_dynamodb.service_resource import Table

_POINTER = "EVENTS"
_PURCHASES = "PURCHASES#"


def _pk(org_id: str) -> str:
    return f"ORG#{org_id}"


class DynamoEventStore:
    def __init__(self, table: Table, client: DynamoDBClient) -> None:
        self._table = table
        self._client = client

    def get_purchases(self, org_id: str, version: str) -> PurchaseSend | None:
        """The purchases of dataset version ``version``, or None before their first step."""
        item = self._table.get_item(Key={"pk": _pk(org_id), "sk": _PURCHASES + version}).get("Item")
        return _to_record(item) if item else None

    def put_purchases(self, record: PurchaseSend) -> None:
        """Store the purchases' progress (the step that owns the version is the only writer)."""
        item = {"pk": _pk(record.org_id), "sk": _PURCHASES + record.dataset_version}
        self._table.put_item(Item={**item, **to_item(record.model_dump())})

    def put_purchases_counted(
        self, record: PurchaseSend, day: str, counts: Mapping[tuple[str, str, str], int]
    ) -> None:
        """Store the purchases' progress and add ``counts[(source, event name, outcome)]`` to the
        organization's ``day`` (UTC date) in one transaction: a step killed around it leaves both
        written or neither (its retry sends the batch again), so the Events page's count of a batch
        is never short and never twice."""
        from boto3.dynamodb.types import TypeSerializer

        positive = {key: value for key, value in counts.items() if value > 0}
        if not positive:
            self.put_purchases(record)
            return
        serializer = TypeSerializer()
        item = {
            "pk": _pk(record.org_id),
            "sk": _PURCHASES + record.dataset_version,
            **to_item(record.model_dump()),
        }
        self._client.transact_write_items(
            TransactItems=[
                {
                    "Put": {
                        "TableName": self._table.name,
                        "Item": {k: serializer.serialize(v) for k, v in item.items()},
                    }
                },
                _added_to_day(self._table.name, record.org_id, day, positive),
            ]
        )

    def finish_purchases(self, record: PurchaseSend) -> None:
        """Store ``record`` (state ``sent``) and make its version the last sent in full, unless a later
        version already is (versions are named so they sort by time); no version is part-sent then."""
        from boto3.dynamodb.types import TypeSerializer

        serializer = TypeSerializer()
        item = {
            "pk": _pk(record.org_id),
            "sk": _PURCHASES + record.dataset_version,
            **to_item(record.model_dump()),
        }
        try:
            self._client.transact_write_items(
                TransactItems=[
                    {
                        "Put": {
                            "TableName": self._table.name,
                            "Item": {k: serializer.serialize(v) for k, v in item.items()},
                        }
                    },
                    {
                        "Update": {
                            "TableName": self._table.name,
                            "Key": {"pk": {"S": _pk(record.org_id)}, "sk": {"S": _POINTER}},
                            "UpdateExpression": "SET purchases_sent_through = :v REMOVE purchases_part_sent",
                            "ConditionExpression": (
                                "attribute_not_exists(purchases_sent_through) OR purchases_sent_through < :v"
                            ),
                            "ExpressionAttributeValues": {":v": {"S": record.dataset_version}},
                        }
                    },
                ]
            )
        except self._client.exceptions.TransactionCanceledException:
            # A later version was sent first: keep the pointer, store this version's outcome alone.
            self.put_purchases(record)

    def mark_part_sent(self, org_id: str, version: str) -> None:
        """Note that ``version``'s purchases are part-sent: a later version's step finishes it first."""
        self._table.update_item(
            Key={"pk": _pk(org_id), "sk": _POINTER},
            UpdateExpression="SET purchases_part_sent = :v",
            ExpressionAttributeValues={":v": version},
        )

    def pointers(self, org_id: str) -> tuple[str | None, str | None]:
        """The latest version whose purchases were sent in full, and a version part-sent since (or None)."""
        item = self._table.get_item(Key={"pk": _pk(org_id), "sk": _POINTER}).get("Item") or {}
        sent, part = item.get("purchases_sent_through"), item.get("purchases_part_sent")
        return (str(sent) if sent else None), (str(part) if part else None)


def _to_record(item: Mapping[str, Any]) -> PurchaseSend:
    values = {key: value for key, value in from_item(item).items() if key not in ("pk", "sk")}
    return PurchaseSend.model_validate(values)


# --- The site's events (issue 21, item 3) ---------------------------------------------------------------

_DESERIALIZER = TypeDeserializer()
_SITE = "EVENTSITE"
# A site key's lookup item: ``SITEKEY#<sha256>`` / ``SITEKEY`` (account closure finds them by ``org_id``).
SITE_KEY_PREFIX = "SITEKEY#"
SITE_KEY_SORT = "SITEKEY"
_DAY = "EVENTSDAY#"
_REJECTION = "EVENTREJ#"
# A rotated-out or revoked key's lookup item, and a rejection, are kept this long (TTL: expires_at).
_KEEP_SECONDS = 30 * 86_400
# What was counted once on the Events page: a checkout order's Purchase (kept as long), a shop page's
# event (as long as the platform deduplicates it, the caller says).
_COUNTED = "EVENTCOUNTED#"
# A plain write to the day item while a transaction holds it is refused (TransactionConflict): tries.
_CONFLICT_ATTEMPTS = 4


def site_key_hash(key: str) -> str:
    """The lookup name of a site key: its SHA-256 (the table holds no index on the key itself)."""
    import hashlib

    return hashlib.sha256(key.encode()).hexdigest()


def _count_name(source: str, event_name: str, outcome: str) -> str:
    return f"c.{source}.{event_name}.{outcome}"


def _added_to_day(table_name: str, org_id: str, day: str, counts: Mapping[tuple[str, str, str], int]) -> Any:
    """A transaction's update adding ``counts`` (each above zero) to the organization's ``day``."""
    return {
        "Update": {
            "TableName": table_name,
            "Key": {"pk": {"S": _pk(org_id)}, "sk": {"S": _DAY + day}},
            "UpdateExpression": "ADD " + ", ".join(f"#c{i} :c{i}" for i in range(len(counts))),
            "ExpressionAttributeNames": {f"#c{i}": _count_name(*key) for i, key in enumerate(counts)},
            "ExpressionAttributeValues": {
                f":c{i}": {"N": str(value)} for i, value in enumerate(counts.values())
            },
        }
    }


class DynamoEventSiteStore:
    """The organization's site settings (``ORG#<org>`` / ``EVENTSITE``), one lookup item per site key
    (``SITEKEY#<sha256>``, which the public endpoint's one write per request checks and counts on),
    events counted per day (``EVENTSDAY#<date>``), what was counted once (``EVENTCOUNTED#<marker>``) and
    rejected events (``EVENTREJ#<time>#<id>``)."""

    def __init__(self, table: Table, client: DynamoDBClient) -> None:
        self._table = table
        self._client = client

    # Settings and keys --------------------------------------------------------------------------------

    def get_site(self, org_id: str) -> EventSite | None:
        item = self._table.get_item(Key={"pk": _pk(org_id), "sk": _SITE}, ConsistentRead=True).get("Item")
        if not item:
            return None
        values = {key: value for key, value in from_item(item).items() if key not in ("pk", "sk")}
        return EventSite.model_validate(values)

    def save_site(
        self,
        site: EventSite,
        *,
        new_key: str | None = None,
        expire_key: tuple[str, datetime] | None = None,
        revoke_keys: Sequence[str] = (),
    ) -> None:
        """Store ``site`` and, in the same transaction, its keys' lookup items: every key in force
        gets the site's domains and test code, ``new_key`` is created, ``expire_key`` (key, when) stops
        working at that time, ``revoke_keys`` stop working now."""
        from boto3.dynamodb.types import TypeSerializer

        serializer = TypeSerializer()
        now = site.updated_at
        settings = {":domains": site.domains, ":org": site.org_id}
        # Each Put and Update without its TableName, which the one call below adds (written out there so
        # that scripts/aws_calls.py reads the calls the role must grant).
        puts: list[dict[str, Any]] = [
            {
                "Item": {
                    key: serializer.serialize(value)
                    for key, value in {
                        "pk": _pk(site.org_id),
                        "sk": _SITE,
                        **to_item(site.model_dump()),
                    }.items()
                },
            }
        ]
        updates: list[dict[str, Any]] = []
        revoked = set(revoke_keys)
        for key in {k for k in (site.key, site.previous_key) if k} - revoked - {new_key}:
            expires = expire_key[1] if expire_key and expire_key[0] == key else None
            update = "SET domains = :domains, org_id = :org"
            values: dict[str, Any] = dict(settings)
            update += ", test_event_code = :code" if site.test_event_code else ""
            if site.test_event_code:
                values[":code"] = site.test_event_code
            remove = " REMOVE test_event_code" if not site.test_event_code else ""
            if expires is not None:
                update += ", valid_until = :until, expires_at = :cleanup"
                values[":until"] = int(expires.timestamp())
                values[":cleanup"] = int(expires.timestamp()) + _KEEP_SECONDS
            updates.append(self._lookup_update(key, update + remove, values))
        for key in revoked:
            updates.append(
                self._lookup_update(
                    key,
                    "SET revoked_at = :at, expires_at = :cleanup",
                    {":at": now.isoformat(), ":cleanup": int(now.timestamp()) + _KEEP_SECONDS},
                )
            )
        if new_key is not None:
            item: dict[str, Any] = {
                "pk": SITE_KEY_PREFIX + site_key_hash(new_key),
                "sk": SITE_KEY_SORT,
                "org_id": site.org_id,
                "domains": site.domains,
                "rate_window": 0,
                "rate_count": 0,
                "created_at": now.isoformat(),
            }
            if site.test_event_code:
                item["test_event_code"] = site.test_event_code
            puts.append(
                {
                    "Item": {key: serializer.serialize(value) for key, value in item.items()},
                    "ConditionExpression": "attribute_not_exists(pk)",
                }
            )
        self._client.transact_write_items(
            TransactItems=[
                *({"Put": {"TableName": self._table.name, **put}} for put in puts),  # type: ignore[list-item]
                *({"Update": {"TableName": self._table.name, **update}} for update in updates),  # type: ignore[list-item]
            ]
        )

    def _lookup_update(self, key: str, update: str, values: dict[str, Any]) -> dict[str, Any]:
        from boto3.dynamodb.types import TypeSerializer

        serializer = TypeSerializer()
        return {
            "Key": {
                "pk": {"S": SITE_KEY_PREFIX + site_key_hash(key)},
                "sk": {"S": SITE_KEY_SORT},
            },
            "UpdateExpression": update,
            "ConditionExpression": "attribute_exists(pk)",
            "ExpressionAttributeValues": {
                name: serializer.serialize(value) for name, value in values.items()
            },
        }

    # The public endpoint's one write --------------------------------------------------------------------

    def admit(self, key: str, events: int, now: float, limit: int, window_seconds: int) -> SiteAdmission:
        """Check ``key`` and count ``events`` against its site's ``limit`` per ``window_seconds`` in one
        conditional write (two when a new window starts). Returns the organization's settings, or why
        the request is refused."""
        window = int(now // window_seconds)
        retry_after = max(1, int((window + 1) * window_seconds - now + 0.999))
        if events > limit:
            return SiteAdmission(refused="throttled", retry_after_seconds=retry_after)
        in_force = (
            "attribute_exists(pk) AND attribute_not_exists(revoked_at)"
            " AND (attribute_not_exists(valid_until) OR valid_until > :now)"
        )
        values = {":n": events, ":w": window, ":room": limit - events, ":now": int(now)}
        attempts = (
            # The window under way: count, while it has room.
            ("SET rate_count = rate_count + :n", f"{in_force} AND rate_window = :w AND rate_count <= :room"),
            # A new window: start counting.
            ("SET rate_window = :w, rate_count = :n", f"{in_force} AND rate_window < :w"),
        )
        key_item = {"pk": SITE_KEY_PREFIX + site_key_hash(key), "sk": SITE_KEY_SORT}
        refusal = self._table.meta.client.exceptions.ConditionalCheckFailedException
        for _ in range(2):  # a request that starts a window can race another one: try the pair again
            for first, (update, condition) in zip((True, False), attempts, strict=True):
                used = {name: value for name, value in values.items() if name in update + condition}
                try:
                    answer = self._table.update_item(
                        Key=key_item,
                        UpdateExpression=update,
                        ConditionExpression=condition,
                        ExpressionAttributeValues=used,
                        ReturnValues="ALL_NEW",
                        ReturnValuesOnConditionCheckFailure="ALL_OLD",
                    )
                except refusal as refused:
                    # The refused item comes back in DynamoDB's typed form ({"N": "3"}).
                    old = {
                        name: _DESERIALIZER.deserialize(value)
                        for name, value in (refused.response.get("Item") or {}).items()
                    }
                    if not old:
                        return SiteAdmission(refused="unknown")
                    if old.get("revoked_at") or ("valid_until" in old and int(old["valid_until"]) <= now):
                        return SiteAdmission(refused="revoked")
                    if first and int(old.get("rate_window", 0)) == window:
                        return SiteAdmission(refused="throttled", retry_after_seconds=retry_after)
                    continue
                item = from_item(answer["Attributes"])
                return SiteAdmission(
                    org_id=str(item["org_id"]),
                    domains=[str(domain) for domain in item.get("domains", [])],
                    test_event_code=item.get("test_event_code"),
                )
        return SiteAdmission(refused="throttled", retry_after_seconds=retry_after)

    def key_domains(self, key: str, now: float) -> list[str]:
        """The declared domains of ``key``'s organization, or none for a key not in force (unknown,
        revoked, expired). Reads only."""
        found = self._table.get_item(
            Key={"pk": SITE_KEY_PREFIX + site_key_hash(key), "sk": SITE_KEY_SORT}
        ).get("Item")
        item = from_item(found or {})
        expired = item.get("valid_until") is not None and int(item["valid_until"]) <= now
        if not item or item.get("revoked_at") or expired:
            return []
        return [str(domain) for domain in item.get("domains", [])]

    # Counts and rejections ----------------------------------------------------------------------------------

    def add_counts(self, org_id: str, day: str, counts: Mapping[tuple[str, str, str], int]) -> None:
        """Add ``counts[(source, event name, outcome)]`` to the organization's ``day`` (UTC date)."""
        positive = {key: value for key, value in counts.items() if value > 0}
        if not positive:
            return
        names = {f"#c{i}": _count_name(*key) for i, key in enumerate(positive)}
        values = {f":c{i}": value for i, value in enumerate(positive.values())}
        for attempt in range(1, _CONFLICT_ATTEMPTS + 1):
            try:
                self._table.update_item(
                    Key={"pk": _pk(org_id), "sk": _DAY + day},
                    UpdateExpression="ADD " + ", ".join(f"#c{i} :c{i}" for i in range(len(positive))),
                    ExpressionAttributeNames=names,
                    ExpressionAttributeValues=values,
                )
                return
            except ClientError as exc:
                # A transaction holds the day (a checkout's or a sync's purchases with their markers):
                # DynamoDB refuses a plain write to it meanwhile, without applying it, so the ADD is
                # tried again once the transaction is likely over (botocore does not retry this one).
                conflict = exc.response.get("Error", {}).get("Code") == "TransactionConflictException"
                if not conflict or attempt == _CONFLICT_ATTEMPTS:
                    raise
                time.sleep(random.uniform(0.02, 0.08) * attempt)

    def add_counts_once(
        self,
        org_id: str,
        day: str,
        counts: Mapping[tuple[str, str, str], int],
        marker: str,
        at: datetime,
    ) -> bool:
        """Add ``counts`` to the organization's ``day`` once for ``marker`` (what is counted, e.g. one
        checkout order): the counts and a marker item (``EVENTCOUNTED#<marker>``, kept 30 days) in one
        transaction that holds only while the marker is absent. False when it was counted before
        (nothing added): a delivery handled again after its handler died counts once, never twice."""
        from boto3.dynamodb.types import TypeSerializer

        positive = {key: value for key, value in counts.items() if value > 0}
        if not positive:
            return True
        serialize = TypeSerializer().serialize
        pk = {"S": _pk(org_id)}
        try:
            self._client.transact_write_items(
                TransactItems=[
                    {
                        "Put": {
                            "TableName": self._table.name,
                            "Item": {
                                "pk": pk,
                                "sk": {"S": _COUNTED + marker},
                                "expires_at": serialize(int(at.timestamp()) + _KEEP_SECONDS),
                            },
                            "ConditionExpression": "attribute_not_exists(pk)",
                        }
                    },
                    _added_to_day(self._table.name, org_id, day, positive),
                ]
            )
        except self._client.exceptions.TransactionCanceledException as cancelled:
            reasons = [r.get("Code") for r in cancelled.response.get("CancellationReasons", [])]
            if reasons and reasons[0] == "ConditionalCheckFailed":
                return False
            raise
        return True

    def mark_counted(self, org_id: str, markers: Sequence[str], at: datetime, keep_seconds: int) -> list[str]:
        """Mark each of ``markers`` (what is counted once, e.g. ``site:Purchase:<order id>``) counted at
        ``at``, and answer the ones newly marked: those to count. One conditional PutItem each
        (``EVENTCOUNTED#<marker>``, kept ``keep_seconds``), taken only while no marker of that name is
        in force (absent, or older than ``keep_seconds``: TTL deletes it some time later). No
        transaction and nothing on the day's item, so concurrent requests never cancel each other;
        the caller adds the newly marked to the day after (:meth:`add_counts`): a process that dies
        between the two leaves those few uncounted, never counted twice (docs/failure-modes.md)."""
        now = int(at.timestamp())
        refused = self._table.meta.client.exceptions.ConditionalCheckFailedException
        marked = []
        for marker in dict.fromkeys(markers):
            try:
                self._table.put_item(
                    Item={"pk": _pk(org_id), "sk": _COUNTED + marker, "expires_at": now + keep_seconds},
                    ConditionExpression="attribute_not_exists(pk) OR expires_at < :now",
                    ExpressionAttributeValues={":now": now},
                )
            except refused:
                continue
            marked.append(marker)
        return marked

    def days(self, org_id: str, first: str, last: str) -> list[EventDay]:
        """The organization's days from ``first`` to ``last`` (UTC dates, inclusive) that had events."""
        found = []
        for item in _query_all(self._table, _pk(org_id), _DAY + first, _DAY + last):
            counts: dict[str, dict[str, dict[str, int]]] = {}
            for name, value in from_item(item).items():
                if not name.startswith("c."):
                    continue
                _, source, event_name, outcome = name.split(".", 3)
                counts.setdefault(source, {}).setdefault(event_name, {})[outcome] = int(value)
            found.append(EventDay(date=str(item["sk"]).removeprefix(_DAY), counts=counts))
        return found

    def add_rejections(self, org_id: str, rejections: Sequence[StoredRejection]) -> None:
        """Keep ``rejections`` for the Events page (30 days)."""
        import uuid

        # One PutItem each (a request has 20 events at most): the site events role may only put and
        # update items under given partition-key prefixes (docs/permissions.md), no batch writes.
        for rejection in rejections:
            self._table.put_item(
                Item={
                    "pk": _pk(org_id),
                    "sk": f"{_REJECTION}{rejection.at.isoformat()}#{uuid.uuid4().hex[:8]}",
                    "expires_at": int(rejection.at.timestamp()) + _KEEP_SECONDS,
                    **to_item(rejection.model_dump()),
                }
            )

    def latest_rejections(self, org_id: str, limit: int) -> list[StoredRejection]:
        """The organization's ``limit`` latest rejected events, newest first."""
        answer = self._table.query(
            KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
            ExpressionAttributeValues={":pk": _pk(org_id), ":prefix": _REJECTION},
            ScanIndexForward=False,
            Limit=limit,
        )
        return [
            StoredRejection.model_validate(
                {k: v for k, v in from_item(item).items() if k not in ("pk", "sk", "expires_at")}
            )
            for item in answer.get("Items", [])
        ]


def _query_all(table: Table, pk: str, first: str, last: str) -> Iterator[Mapping[str, Any]]:
    kwargs: dict[str, Any] = {
        "KeyConditionExpression": "pk = :pk AND sk BETWEEN :first AND :last",
        "ExpressionAttributeValues": {":pk": pk, ":first": first, ":last": last},
    }
    while True:
        answer = table.query(**kwargs)
        yield from answer.get("Items", [])
        if "LastEvaluatedKey" not in answer:
            return
        kwargs["ExclusiveStartKey"] = answer["LastEvaluatedKey"]
