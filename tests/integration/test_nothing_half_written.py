"""Nothing half-written, through the local gateway: an audience request refused after its
Idempotency-Key was claimed leaves no object, no record and no claimed key, in the data bucket, the
main table or the idempotency table (each scanned), and the key can be used again.

The failures after the S3 writes themselves (a refused record write) are in
``tests/unit/audiences/test_nothing_half_written.py``: AWS cannot be made to refuse a write here.
"""

from __future__ import annotations

from typing import Any

import httpx

from local.connected import ConnectedOrg
from shared import wiring

KEY = "half-written-0001"


def org_objects(org_id: str) -> list[str]:
    s3 = wiring.s3_client()
    bucket = wiring.settings().data_bucket
    keys: list[str] = []
    for prefix in (f"sources/{org_id}/", f"snapshots/{org_id}/"):
        keys += [item["Key"] for item in s3.list_objects_v2(Bucket=bucket, Prefix=prefix).get("Contents", [])]
    return keys


def org_items(org_id: str) -> list[str]:
    items = wiring.table(wiring.settings().main_table).scan()["Items"]
    return [
        str(item["sk"]) for item in items if item["pk"] == f"ORG#{org_id}" and "AUDIENCE" in str(item["sk"])
    ]


def idempotency_records() -> list[dict[str, Any]]:
    return list(wiring.table(wiring.settings().idempotency_table).scan()["Items"])


def test_a_refused_creation_leaves_nothing_and_its_key_can_be_used_again(
    api: httpx.Client, org: ConnectedOrg
) -> None:
    # Given: a list in which nobody can be matched, sent with an Idempotency-Key
    before = idempotency_records()
    unmatched = {"name": "Nobody", "users": [{"user_id": "u1", "email": "not-an-address"}]}
    # When
    refused = api.post(
        "/platform-ads/audiences", json=unmatched, headers={**org.headers, "Idempotency-Key": KEY}
    )
    # Then: refused, and nothing of it is stored anywhere
    assert refused.status_code == 400, refused.text
    assert org_objects(org.org_id) == []
    assert org_items(org.org_id) == []
    assert idempotency_records() == before
    # And the key is free for the corrected request
    corrected = {"name": "Buyers", "users": [{"user_id": "u1", "email": "buyer1@example.com"}]}
    created = api.post(
        "/platform-ads/audiences", json=corrected, headers={**org.headers, "Idempotency-Key": KEY}
    )
    assert created.status_code == 201, created.text
    audience_id = created.json()["audienceId"]
    assert sorted(org_items(org.org_id)) == [f"AUDIENCE#{audience_id}", f"AUDIENCEKEY#{KEY}"]
    assert len(org_objects(org.org_id)) == 2
