"""What account closure reads and deletes in the tables and buckets.

| item | table | pk | sk | found by |
|---|---|---|---|---|
| closure (receipt when finished) | main | ``USER#<sub>`` | ``CLOSURE`` | the user |
| membership | main | ``USER#<sub>`` | ``META`` | a scan: ``org_id`` |
| closed marker (left by closure) | main | ``USER#<sub>`` | ``CLOSED`` | the user |
| pending OAuth state | main | ``OAUTHSTATE#<nonce>`` | ``META`` | a scan: ``org_id`` |
| a site key (in force or not) | main | ``SITEKEY#<sha256>`` | ``SITEKEY`` | a scan: ``org_id`` |
| API key | main | ``APIKEY#<key_id>`` | ``META`` | the key list (older keys: GSI1 ``ORG#<org>#APIKEYS``) |
| a key in its organization's key list | main | ``APIKEY#ORG#<org>`` | ``<key_id>`` | a query |
| everything else of the organization | main | ``ORG#<org>`` | any | a query |
| a key's usage on a day | usage | ``ORG#<org>#KEY#<key_id>`` | ``DAY#<day>`` | a query per key |
| a request's stored result | idempotency | ``id``: ``<function>#<md5>`` | | a scan: the hash |

Memberships, OAuth states and site keys are not indexed by organization (each is read by its own
key), so closure scans the main table for them once, a page at a time, returning the scan's position so a
closure cut short resumes there. The idempotency table holds a day of results at most (TTL), so
scanning it is cheap.

Each membership closure deletes leaves a closed marker under the user, which expires with the
receipts: a session that outlives its organization is told the account was closed, not that the
user belongs to none.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from boto3.dynamodb.conditions import Attr, Key

from shared.clock import iso
from shared.records.closure import ClosureRecord
from shared.repositories.api_keys import key_list_item, org_key_items
from shared.repositories.events import SITE_KEY_PREFIX, SITE_KEY_SORT
from shared.repositories.items import from_item, query_all, to_item

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.service_resource import Table
    from mypy_boto3_s3 import S3Client

# How long a finished closure's receipt stays (the table's TTL removes it).
RECEIPT_LIFETIME = timedelta(days=7)
# Items a scan reads per call (each call is one page).
SCAN_PAGE = 1000

Cursor = dict[str, str] | None


class DynamoClosureStore:
    def __init__(self, table: Table) -> None:
        self._table = table

    def get(self, user_id: str) -> ClosureRecord | None:
        item = self._table.get_item(Key=_closure_key(user_id), ConsistentRead=True).get("Item")
        if not item:
            return None
        fields = {k: v for k, v in item.items() if k not in {"pk", "sk", "expires_at"}}
        return ClosureRecord.model_validate(from_item(fields))

    def put(self, record: ClosureRecord) -> None:
        """Store the record; a finished one gets an expiry (epoch seconds, the table's TTL)."""
        item: dict[str, Any] = {**_closure_key(record.user_id), **to_item(record.model_dump())}
        if record.finished_at is not None:
            item["expires_at"] = int((record.finished_at + RECEIPT_LIFETIME).timestamp())
        self._table.put_item(Item=item)


def _closure_key(user_id: str) -> dict[str, str]:
    return {"pk": f"USER#{user_id}", "sk": "CLOSURE"}


def idempotency_hash(org_id: str, key: str) -> str:
    """The hash Powertools names a stored result by, for a scope's ``[org_id, key]``
    (``shared.wiring.idempotency_config``: ``event_key_jmespath="[org_id, key]"``, MD5 of the
    sorted-keys JSON of what the expression selects)."""
    return hashlib.md5(json.dumps([org_id, key], sort_keys=True).encode(), usedforsecurity=False).hexdigest()


class DynamoOrganizationItems:
    """Deletes an organization's items from the main, usage and idempotency tables."""

    def __init__(self, main: Table, usage: Table, idempotency: Table) -> None:
        self._main = main
        self._usage = usage
        self._idempotency = idempotency

    def delete_access(
        self,
        org_id: str,
        cursor: Cursor,
        closed_at: datetime,
        before_delete: Callable[[list[str]], None],
    ) -> tuple[int, Cursor]:
        """Delete one scanned page's memberships, pending OAuth states and site keys of ``org_id``;
        returns how many, and where the scan goes on (None: it is done). A site key's lookup lives
        outside the organization's partition (the shop's pages send events by it): left, the snippet
        still in the pages would go on writing the closed organization's event counts.

        ``before_delete`` gets the page's members (their ``sub``) before anything of the page is
        deleted, so what it does to them (the user pool) is never skipped by a page cut short: if it
        raises, the page stays and is scanned again. Each member gets a closed marker."""
        people = Attr("pk").begins_with("USER#") | Attr("pk").begins_with("OAUTHSTATE#")
        site_key = Attr("pk").begins_with(SITE_KEY_PREFIX) & Attr("sk").eq(SITE_KEY_SORT)
        condition = ((people & Attr("sk").eq("META")) | site_key) & Attr("org_id").eq(org_id)
        expires = int((closed_at + RECEIPT_LIFETIME).timestamp())

        def members_first(found: list[dict[str, Any]]) -> None:
            members = [
                str(item["pk"]).removeprefix("USER#") for item in found if str(item["pk"]).startswith("USER#")
            ]
            before_delete(members)
            with self._main.batch_writer() as batch:
                for user_id in members:
                    batch.put_item(
                        Item={
                            "pk": f"USER#{user_id}",
                            "sk": "CLOSED",
                            "closed_at": iso(closed_at),
                            "expires_at": expires,
                        }
                    )

        return self._scan_and_delete(
            self._main, ("pk", "sk"), condition, cursor, lambda _: True, before=members_first
        )

    def delete_idempotency(self, org_id: str, keys: Sequence[str], cursor: Cursor) -> tuple[int, Cursor]:
        """Delete one scanned page's stored results of the organization's Idempotency-Keys."""
        hashes = {idempotency_hash(org_id, key) for key in keys}
        if not hashes:
            return 0, None
        return self._scan_and_delete(
            self._idempotency,
            ("id",),
            None,
            cursor,
            lambda item: str(item["id"]).rsplit("#", 1)[-1] in hashes,
        )

    def api_key_ids(self, org_id: str) -> list[str]:
        """The organization's API keys that exist now, revoked ones included (a key just deleted is
        not among them, nor missing one just created: ``org_key_items`` reads consistently)."""
        return sorted(str(item["key_id"]) for item in org_key_items(self._main, org_id))

    def delete_key(self, org_id: str, key_id: str) -> int:
        """Delete a key's usage days, then the key (so a closure cut short still finds the key and
        its remaining days). Returns how many items went."""
        days = query_all(
            self._usage,
            KeyConditionExpression=Key("pk").eq(f"ORG#{org_id}#KEY#{key_id}"),
            ProjectionExpression="pk, sk",
        )
        with self._usage.batch_writer() as batch:
            for day in days:
                batch.delete_item(Key={"pk": day["pk"], "sk": day["sk"]})
        self._main.delete_item(Key={"pk": f"APIKEY#{key_id}", "sk": "META"})
        self._main.delete_item(Key=key_list_item(org_id, key_id))
        return len(days) + 1

    def delete_partition(self, org_id: str, limit: int) -> tuple[int, bool]:
        """Delete up to ``limit`` items of the ``ORG#<org>`` partition; True when none is left."""
        page = self._main.query(
            KeyConditionExpression=Key("pk").eq(f"ORG#{org_id}"),
            ProjectionExpression="pk, sk",
            Limit=limit,
            ConsistentRead=True,
        )
        items = page.get("Items", [])
        with self._main.batch_writer() as batch:
            for item in items:
                batch.delete_item(Key={"pk": item["pk"], "sk": item["sk"]})
        return len(items), "LastEvaluatedKey" not in page

    def _scan_and_delete(
        self,
        table: Table,
        key_names: tuple[str, ...],
        condition: Any,
        cursor: Cursor,
        wanted: Any,
        before: Callable[[list[dict[str, Any]]], None] | None = None,
    ) -> tuple[int, Cursor]:
        kwargs: dict[str, Any] = {"Limit": SCAN_PAGE, "ConsistentRead": True}
        if condition is not None:
            kwargs["FilterExpression"] = condition
        if cursor:
            kwargs["ExclusiveStartKey"] = cursor
        page = table.scan(**kwargs)
        found = [item for item in page.get("Items", []) if wanted(item)]
        if before is not None:
            before(found)
        with table.batch_writer() as batch:
            for item in found:
                batch.delete_item(Key={name: item[name] for name in key_names})
        after = page.get("LastEvaluatedKey")
        return len(found), {k: str(v) for k, v in after.items()} if after else None


class S3PrefixEraser:
    """Deletes every object under a prefix of one bucket: in a versioned bucket every version and
    delete marker, so nothing of the object can be restored."""

    def __init__(self, s3: S3Client, bucket: str) -> None:
        self._s3 = s3
        self._bucket = bucket

    def delete_prefix(self, prefix: str, limit: int) -> tuple[int, bool]:
        """Delete up to ``limit`` (at most 1,000) objects or versions under ``prefix``; True when
        none is left."""
        listing = self._s3.list_object_versions(Bucket=self._bucket, Prefix=prefix, MaxKeys=min(limit, 1000))
        targets: list[dict[str, str]] = [
            {"Key": entry["Key"], "VersionId": entry["VersionId"]}
            for kind in ("Versions", "DeleteMarkers")
            for entry in listing.get(kind, [])  # type: ignore[attr-defined]
        ]
        if targets:
            result = self._s3.delete_objects(Bucket=self._bucket, Delete={"Objects": targets, "Quiet": True})  # type: ignore[typeddict-item]
            if result.get("Errors"):
                codes = sorted({error.get("Code", "?") for error in result["Errors"]})
                raise RuntimeError(
                    f"S3 refused to delete {len(result['Errors'])} objects ({', '.join(codes)})"
                )
        return len(targets), not listing.get("IsTruncated", False)
