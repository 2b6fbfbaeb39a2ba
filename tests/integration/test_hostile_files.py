"""Hostile files through the local stack (issue 25, item 3): a file a merchant can upload, at a
size the upload policy allows, ends in a clear 4xx naming the file and the limit, never a 500."""

from __future__ import annotations

import httpx

from local.connected import ConnectedOrg
from local.uploads import send_upload
from tests.integration.test_data_source import shop_files, upload_shop, wait_for_sync

HUNDRED_MB = 100 * 1024 * 1024


def test_a_100_mb_audience_file_of_one_line_is_refused_naming_the_upload_and_the_limit(
    api: httpx.Client, org: ConnectedOrg
) -> None:
    # Given: 100 MB with no line end, sent to an upload link
    link = api.post("/platform-ads/uploads", headers=org.headers).json()
    content = b"user_id,email," + b"a" * (HUNDRED_MB - 14)
    assert send_upload(link, content, timeout=300).status_code == 204
    # When the audience is created from it (the request, not a background step, answers)
    response = api.post(
        "/platform-ads/audiences",
        json={"name": "One line", "uploadId": link["uploadId"]},
        headers=org.headers,
    )
    # Then a 400 naming the upload and the limit
    assert response.status_code == 400, response.text
    assert response.json()["error"]["field"] == "uploadId"
    assert (
        f"The uploaded CSV (upload {link['uploadId']}) has a line longer than 65,536 characters (line 1)"
        in response.json()["message"]
    )


def test_an_orders_file_with_a_100_mb_line_fails_its_sync_naming_the_file_and_the_limit(
    api: httpx.Client, org: ConnectedOrg
) -> None:
    # Given: a shop whose orders file has one 100 MB record at line 3
    files = shop_files(n_users=50)
    header, first, rest = files["orders"].split(b"\n", 2)
    files["orders"] = b"\n".join([header, first, b"o-huge," + b"x" * HUNDRED_MB, rest])
    upload_id = upload_shop(api, org, files)
    # When it is synced
    started = api.post("/platform-ads/data-source/sync", json={"uploadId": upload_id}, headers=org.headers)
    assert started.status_code == 202, started.text
    source = wait_for_sync(api, org, started.json()["syncId"], trained=False)
    # Then the sync failed naming the file, the line and the limit
    [sync] = [s for s in source["syncs"] if s["syncId"] == started.json()["syncId"]]
    assert sync["state"] == "failed", sync
    assert "orders.csv is not readable CSV at line 3" in sync["error"]["message"]
    assert "longer than 2,097,152 bytes" in sync["error"]["message"]
