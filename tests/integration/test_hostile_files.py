"""Hostile files through the local stack (issue 25, item 3): a file a merchant can upload, at a
size the upload policy allows, ends in a clear 4xx naming the file and the limit, never a 500."""

from __future__ import annotations

import httpx

from local.connected import ConnectedOrg
from local.stack import LocalStack
from local.uploads import send_upload
from tests.hostile_files import gzip_bomb
from tests.integration.test_data_source import shop_files, upload_shop, wait_for_sync

HUNDRED_MB = 100 * 1024 * 1024
# A gibibyte of zeros, gzipped: about 1 MB sent. The service never decompresses an upload.
BOMB = gzip_bomb(1024)


def peaks(stack: LocalStack, function: str) -> list[float]:
    """The peak memory (MB) of each of ``function``'s invocations the local runner recorded."""
    assert stack.runner is not None
    return [
        i.peak_memory_mb for i in stack.runner.invocations() if i.function == function and i.peak_memory_mb
    ]


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


def test_a_gzip_bomb_sent_as_an_audience_list_is_refused_from_its_first_bytes(
    stack: LocalStack, api: httpx.Client, org: ConnectedOrg
) -> None:
    # Given: a gibibyte of zeros, gzipped (about 1 MB), sent to an audience upload link
    link = api.post("/platform-ads/uploads", headers=org.headers).json()
    assert send_upload(link, BOMB).status_code == 204
    assert stack.runner is not None
    stack.runner.clear_invocations()
    # When the audience is created from it
    response = api.post(
        "/platform-ads/audiences", json={"name": "Bomb", "uploadId": link["uploadId"]}, headers=org.headers
    )
    # Then a 400 saying what the file is and what to send instead, within the function's memory (the
    # archive is never opened)
    assert response.status_code == 400, response.text
    assert response.json()["error"]["field"] == "uploadId"
    assert response.json()["message"] == (
        f"The uploaded file (upload {link['uploadId']}) is a compressed file (gz): an audience is made "
        "from a UTF-8 CSV list of users only."
    )
    assert "Decompress it" in response.json()["error"]["remedy"]
    [peak] = peaks(stack, "CreateAudienceFunction")
    assert peak < 512, peak


def test_a_gzip_bomb_in_the_orders_slot_fails_its_sync_saying_what_it_is(
    stack: LocalStack, api: httpx.Client, org: ConnectedOrg
) -> None:
    # Given: a shop whose orders file is a gibibyte of zeros, gzipped
    files = shop_files(n_users=50)
    files["orders"] = BOMB
    upload_id = upload_shop(api, org, files)
    assert stack.runner is not None
    stack.runner.clear_invocations()
    # When it is synced
    started = api.post("/platform-ads/data-source/sync", json={"uploadId": upload_id}, headers=org.headers)
    assert started.status_code == 202, started.text
    source = wait_for_sync(api, org, started.json()["syncId"], trained=False)
    # Then the sync failed saying what the file is, and the job stayed small (nothing decompressed)
    [sync] = [s for s in source["syncs"] if s["syncId"] == started.json()["syncId"]]
    assert sync["state"] == "failed", sync
    assert sync["error"]["message"] == (
        "orders.csv is a compressed file (gz): the service reads UTF-8 CSV, JSON Lines or Parquet files only."
    )
    assert max(peaks(stack, "DataSourceSyncJobFunction")) < 1024
