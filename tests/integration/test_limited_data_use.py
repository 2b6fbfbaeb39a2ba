"""Limited Data Use end to end (docs/platform-notes.md §3.8): customers flagged in the users list of
``POST /platform-ads/audiences`` or in the synced customers file reach the platform sandbox with the
data processing options per row, and the sandbox accepts them as documented."""

from __future__ import annotations

import csv
import io
from typing import Any

import httpx

from local.connected import ConnectedOrg
from local.stack import LocalStack
from tests.integration.test_data_source import shop_files, upload_shop, wait_for_sync

DPO_COLUMNS = ["DATA_PROCESSING_OPTIONS", "DATA_PROCESSING_OPTIONS_COUNTRY", "DATA_PROCESSING_OPTIONS_STATE"]
# How the sandbox keeps non-text values: JSON-encoded.
CALIFORNIA_LDU, LOCATED_LDU, NOT_LDU = ['["LDU"]', "1", "1000"], ['["LDU"]', "0", "0"], ["[]", "0", "0"]


def member_groups(sandbox: httpx.Client, platform_id: str) -> list[dict[str, Any]]:
    response = sandbox.get(f"/audiences/{platform_id}/members")
    response.raise_for_status()
    groups: list[dict[str, Any]] = response.json()["members"]
    return groups


def test_users_flagged_in_the_request_are_sent_with_their_options(
    api: httpx.Client, org: ConnectedOrg, sandbox: httpx.Client
) -> None:
    # Given: users of whom every third is a Californian who asked for Limited Data Use, every third
    # another American who did, and the rest explicitly not
    users = [
        {
            "user_id": f"u{i}",
            "email": f"buyer{i}@example.com",
            "country": "US",
            "state": ["CA", "NY", "CA"][i % 3],
            "limitedDataUse": i % 3 != 2,
        }
        for i in range(30)
    ]

    # When: an audience is created from them
    created = api.post(
        "/platform-ads/audiences", json={"name": "LDU buyers", "users": users}, headers=org.headers
    )

    # Then: every row reached the platform with the options, country and state the platform documents
    assert created.status_code == 201, created.text
    [group] = member_groups(sandbox, created.json()["platformCustomAudienceId"])
    assert [key for key in group["schema"] if key.startswith("DATA_PROCESSING_OPTIONS")] == DPO_COLUMNS
    at = [group["schema"].index(key) for key in DPO_COLUMNS]
    options = sorted([row[i] for i in at] for row in group["rows"])
    assert options == sorted([CALIFORNIA_LDU] * 10 + [LOCATED_LDU] * 10 + [NOT_LDU] * 10)


def with_limited_data_use(customers: bytes) -> tuple[bytes, int]:
    """The customers file with limited_data_use and state columns: every other customer flagged,
    all in California; returns the file and how many are flagged."""
    rows = list(csv.reader(io.StringIO(customers.decode())))
    header = [name for name in rows[0] if name not in ("limited_data_use", "state")]
    kept = [rows[0].index(name) for name in header]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([*header, "limited_data_use", "state"])
    for i, row in enumerate(rows[1:]):
        writer.writerow([*(row[k] for k in kept), "true" if i % 2 == 0 else "", "CA"])
    return out.getvalue().encode(), (len(rows) - 1 + 1) // 2


def test_a_segment_of_flagged_customers_is_sent_with_their_options(
    stack: LocalStack, api: httpx.Client, org: ConnectedOrg, sandbox: httpx.Client
) -> None:
    # Given: a shop synced with a customers file that flags every other customer for Limited Data Use
    files = shop_files(n_users=500, seed=11)
    files["customers"], _ = with_limited_data_use(files["customers"])
    started = api.post(
        "/platform-ads/data-source/sync",
        json={"uploadId": upload_shop(api, org, files)},
        headers=org.headers,
    )
    assert started.status_code == 202, started.text
    source = wait_for_sync(api, org, started.json()["syncId"], trained=True)
    assert source["current"]["training"]["purchase"]["state"] == "succeeded", source

    # When: an audience is made from a segment of the purchase model
    segment = {"modelName": "shop-purchase", "productId": "p00001", "rule": "top_percent", "value": 50}
    created = api.post(
        "/platform-ads/audiences", json={"name": "Segment", "segment": segment}, headers=org.headers
    )

    # Then: every row carries the options; flagged Americans in California say so, other flagged
    # customers are left to the platform to locate, the rest are explicitly not LDU
    assert created.status_code == 201, created.text
    [group] = member_groups(sandbox, created.json()["platformCustomAudienceId"])
    assert [key for key in group["schema"] if key.startswith("DATA_PROCESSING_OPTIONS")] == DPO_COLUMNS
    at = [group["schema"].index(key) for key in DPO_COLUMNS]
    options = [[row[i] for i in at] for row in group["rows"]]
    assert len(options) == created.json()["userCount"]
    assert {tuple(o) for o in options} <= {tuple(CALIFORNIA_LDU), tuple(LOCATED_LDU), tuple(NOT_LDU)}
    assert options.count(NOT_LDU) > 0
    assert options.count(CALIFORNIA_LDU) + options.count(LOCATED_LDU) > 0
