"""The data source through the local stack: three files uploaded by presigned link, synced in the
data source state machine (moto executes it), and both models trained from the stored version."""

from __future__ import annotations

import json
import time
import uuid
from datetime import UTC, datetime
from typing import Any

import httpx

from local.connected import ConnectedOrg
from local.stack import LocalStack
from local.uploads import send_upload
from shared import wiring
from shared.ml.datasets import dump_records
from shared.records.datasources import SyncRecord
from tests.integration.patience import BACKGROUND_JOB_SECONDS
from tools.synthetic import SyntheticConfig, generate_shop


def upload_shop(api: httpx.Client, org: ConnectedOrg, files: dict[str, bytes]) -> str:
    """POST the files to fresh upload links, as the dashboard does; returns the upload id."""
    links = api.post("/platform-ads/data-source/uploads", json={"format": "csv"}, headers=org.headers)
    assert links.status_code == 201, links.text
    for link in links.json()["files"]:
        sent = send_upload(link, files[link["kind"]])
        assert sent.status_code == 204, sent.text
    upload_id: str = links.json()["uploadId"]
    return upload_id


def shop_files(n_users: int = 400, seed: int = 5) -> dict[str, bytes]:
    shop = generate_shop(SyntheticConfig(n_users=n_users, n_products=40, seed=seed))
    return {
        "customers": dump_records(shop.data.customers, "csv"),
        "products": dump_records(shop.data.products, "csv"),
        "orders": dump_records(shop.data.orders, "csv"),
    }


def wait_for_sync(api: httpx.Client, org: ConnectedOrg, sync_id: str, *, trained: bool) -> dict[str, Any]:
    """Poll GET /platform-ads/data-source (as the dashboard does) until the sync has an outcome and,
    when ``trained``, both models of its version have finished training."""
    deadline = time.monotonic() + BACKGROUND_JOB_SECONDS
    while time.monotonic() < deadline:
        source = api.get("/platform-ads/data-source", headers=org.headers).json()
        [sync] = [s for s in source["syncs"] if s["syncId"] == sync_id]
        if sync["state"] in {"review", "failed"}:
            return dict(source)
        version = next((v for v in source["versions"] if v["version"] == sync["datasetVersion"]), None)
        if sync["state"] == "synced" and (
            not trained or all(t["state"] in {"succeeded", "failed"} for t in version["training"].values())
        ):
            return dict(source)
        time.sleep(0.3)
    raise AssertionError(f"sync {sync_id} did not finish")


def test_uploaded_files_are_synced_and_both_models_trained_in_the_background(
    stack: LocalStack, api: httpx.Client, org: ConnectedOrg
) -> None:
    # Given: a shop's three files uploaded through presigned links
    upload_id = upload_shop(api, org, shop_files())

    # When: they are synced, asking for a 21-day prediction horizon
    started = api.post(
        "/platform-ads/data-source/sync",
        json={"uploadId": upload_id, "horizonDays": 21},
        headers=org.headers,
    )

    # Then: 202 at once, and the version it stored trains both models, each naming the version
    assert started.status_code == 202, started.text
    assert started.json()["state"] == "validating"
    assert started.json()["horizonDays"] == 21
    source = wait_for_sync(api, org, started.json()["syncId"], trained=True)
    current = source["current"]
    assert current["version"] == started.json()["syncId"]
    assert current["rowCounts"]["customers"] == 400
    assert {kind: t["state"] for kind, t in current["training"].items()} == {
        "purchase": "succeeded",
        "recommendation": "succeeded",
    }
    models = {m.name: m for m in _models(org.org_id)}
    assert models["shop-purchase"].dataset_version == current["version"]
    assert models["shop-recommendations"].dataset_version == current["version"]
    assert models["shop-purchase"].version == current["training"]["purchase"]["modelVersion"]
    # and the state machine passed the sync's horizon on to both trainings
    assert models["shop-purchase"].horizon_days == 21
    assert models["shop-recommendations"].horizon_days == 21


def test_rejected_rows_are_reported_then_accepted(api: httpx.Client, org: ConnectedOrg) -> None:
    # Given: orders with a line for a customer who is not in the customers file
    files = shop_files(n_users=200, seed=9)
    files["orders"] += b"bad-1,nobody,p00000,1,5.0,2024-06-01T10:00:00\n"
    upload_id = upload_shop(api, org, files)

    # When: synced, the report names the line; synced again accepting it, the good rows are kept
    first = api.post("/platform-ads/data-source/sync", json={"uploadId": upload_id}, headers=org.headers)
    review = wait_for_sync(api, org, first.json()["syncId"], trained=False)
    [sync] = review["syncs"]
    assert sync["state"] == "review"
    assert sync["rejectedCount"] == 1
    [row] = sync["rejectedRows"]
    assert row["file"] == "orders.csv"
    assert row["field"] == "user_id"
    assert row["row"] == files["orders"].count(b"\n")
    assert review["current"] is None

    accepted = api.post(
        "/platform-ads/data-source/sync",
        json={"uploadId": upload_id, "acceptRejectedRows": True},
        headers=org.headers,
    )
    # (in force once its purchase model is trained on it)
    done = wait_for_sync(api, org, accepted.json()["syncId"], trained=True)
    assert done["current"]["rejectedCount"] == 1
    assert done["current"]["rejectedRowsAccepted"] is True


def test_a_missing_header_column_is_named(api: httpx.Client, org: ConnectedOrg) -> None:
    files = shop_files(n_users=50, seed=2)
    files["customers"] = files["customers"].replace(b"user_id,", b"customer,", 1)
    upload_id = upload_shop(api, org, files)
    started = api.post("/platform-ads/data-source/sync", json={"uploadId": upload_id}, headers=org.headers)
    source = wait_for_sync(api, org, started.json()["syncId"], trained=False)
    [sync] = source["syncs"]
    assert sync["state"] == "failed"
    assert sync["error"]["message"] == "customers.csv has no user_id column in its header row."


def _models(org_id: str) -> list[Any]:
    from shared import wiring

    return wiring.model_store().list_for_org(org_id)


def test_a_sync_whose_step_crashes_ends_failed_on_the_dashboard_and_does_not_block_retraining(
    stack: LocalStack, api: httpx.Client, org: ConnectedOrg
) -> None:
    # Given: a sync recorded as validating whose files are gone when its step reads them (S3 answers
    # NoSuchKey: an error the step does not record itself, as a crash or a timeout would be)
    now = datetime.now(UTC)
    sync_id = f"{now:%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:8]}"
    missing = {
        kind: f"data-sources/{org.org_id}/gone/{kind}.csv" for kind in ("customers", "products", "orders")
    }
    wiring.dataset_store().put_sync(
        SyncRecord(org_id=org.org_id, sync_id=sync_id, keys=missing, created_at=now, updated_at=now)
    )

    # When: the data source state machine runs it
    stack.client("stepfunctions").start_execution(
        stateMachineArn=stack.physical["DataSourceStateMachine"].ref,
        name=sync_id,
        input=json.dumps({"org_id": org.org_id, "sync_id": sync_id}),
    )

    # Then: its Catch recorded the failure on the sync, which the data source shows with what to do
    source = wait_for_sync(api, org, sync_id, trained=False)
    [sync] = [s for s in source["syncs"] if s["syncId"] == sync_id]
    assert sync["state"] == "failed"
    assert sync["error"]["message"] == "The sync failed unexpectedly (NoSuchKey)."
    assert sync["error"]["remedy"].startswith("Sync the files again")


def test_a_matched_orders_file_syncs_and_its_matching_is_kept_for_the_next_sync(
    api: httpx.Client, org: ConnectedOrg
) -> None:
    # Given: an orders file in another system's columns, uploaded
    files = shop_files(n_users=60, seed=13)
    lines = files["orders"].decode().splitlines()
    header, rows = "Order;Client;SKU;Qty;Total;Date", [line.replace(",", ";") for line in lines[1:]]
    files["orders"] = ("\n".join([header, *rows]) + "\n").encode()
    upload_id = upload_shop(api, org, files)
    matching = {
        "Order": "order_id",
        "Client": "user_id",
        "SKU": "product_id",
        "Qty": "quantity",
        "Total": "amount",
        "Date": "timestamp",
    }

    # When: a sync names a column the orders file does not have, then one sends the matching
    refused = api.post(
        "/platform-ads/data-source/sync",
        json={"uploadId": upload_id, "mappings": {"orders": {**matching, "Date": "created"}}},
        headers=org.headers,
    )
    started = api.post(
        "/platform-ads/data-source/sync",
        json={"uploadId": upload_id, "mappings": {"orders": matching}},
        headers=org.headers,
    )

    # Then: the first is refused naming the column, nothing started; the second syncs every line, says
    # how the file was read, and the data source offers the matching for the next sync
    assert refused.status_code == 400, refused.text
    assert refused.json()["message"] == "The orders file has no column created."
    assert started.status_code == 202, started.text
    source = wait_for_sync(api, org, started.json()["syncId"], trained=False)
    [sync] = source["syncs"]
    assert sync["state"] == "synced", sync["error"]
    assert sync["rowsRead"]["orders"] == len(lines) - 1
    assert sync["recognised"] == {"orders": "you matched its columns"}
    assert source["mappings"] == {"orders": matching}
