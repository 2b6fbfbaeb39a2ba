"""The wizard's first half through the local stack: three uploaded files, a sync that trains both
models, a targeting preview, and an audience made from the previewed segment."""

from __future__ import annotations

import httpx

from local.connected import ConnectedOrg
from local.stack import LocalStack
from tests.integration.test_activation import wait_for
from tests.integration.test_data_source import shop_files, upload_shop, wait_for_sync

SEGMENT = {"modelName": "shop-purchase", "productId": "p00001", "rule": "top_percent", "value": 50}


def synced_and_trained(api: httpx.Client, org: ConnectedOrg) -> str:
    upload_id = upload_shop(api, org, shop_files(n_users=500, seed=11))
    started = api.post("/platform-ads/data-source/sync", json={"uploadId": upload_id}, headers=org.headers)
    assert started.status_code == 202, started.text
    source = wait_for_sync(api, org, started.json()["syncId"], trained=True)
    assert source["current"]["training"]["purchase"]["state"] == "succeeded"
    version: str = source["current"]["version"]
    return version


def test_three_files_become_a_preview_and_an_audience_from_its_segment(
    stack: LocalStack, api: httpx.Client, org: ConnectedOrg, sandbox: httpx.Client
) -> None:
    # Given: a shop synced from three uploaded files, both models trained
    version = synced_and_trained(api, org)

    # When: the user previews the top half of the purchase model's scores for a product
    preview = api.post(
        "/platform-ads/targeting/preview",
        json={**SEGMENT, "objective": "prospecting", "lookalikeCountry": "GB"},
        headers=org.headers,
    )

    # Then: the preview sizes the segment, shows the cut and the coverage of its identifiers
    assert preview.status_code == 200, preview.text
    shown = preview.json()
    assert shown["datasetVersion"] == version
    assert shown["scoredUsers"] > 0
    assert shown["size"] == -(-shown["scoredUsers"] // 2)
    assert sum(shown["histogram"]["segment"]) == shown["size"]
    assert sum(shown["histogram"]["allUsers"]) == shown["scoredUsers"]
    assert 0 < shown["coverage"]["usable"] <= shown["size"]
    assert shown["seed"]["country"] == "GB"
    assert shown["seed"]["reached"] == (shown["seed"]["usableInCountry"] >= 100)

    # When: an audience is created from the same segment, without a holdout
    created = api.post(
        "/platform-ads/audiences",
        json={"name": "Likely buyers", "segment": SEGMENT, "holdoutPercent": 0},
        headers=org.headers,
    )

    # Then: it holds the segment's users and records the model and dataset versions and the rule
    assert created.status_code == 201, created.text
    assert created.json()["userCount"] == shown["coverage"]["usable"]
    [audience] = [
        a
        for a in api.get("/platform-ads/audiences", headers=org.headers).json()["audiences"]
        if a["audienceId"] == created.json()["audienceId"]
    ]
    assert audience["segment"]["datasetVersion"] == version
    assert audience["segment"]["modelVersion"] == shown["modelVersion"]
    assert audience["segment"]["rule"] == "top_percent"
    assert audience["modelId"] == "shop-purchase"
    members = sandbox.get(f"/audiences/{audience['platformCustomAudienceId']}/members").json()["members"]
    assert sum(len(group["rows"]) for group in members) == shown["coverage"]["usable"]


def test_a_preview_before_any_sync_says_what_to_do(api: httpx.Client, org: ConnectedOrg) -> None:
    response = api.post("/platform-ads/targeting/preview", json=SEGMENT, headers=org.headers)
    assert response.status_code == 404
    assert response.json()["error"]["field"] == "modelName"
    assert "Sync a data source" in response.json()["error"]["remedy"]


def test_a_bad_segment_rule_names_the_field(api: httpx.Client, org: ConnectedOrg) -> None:
    response = api.post(
        "/platform-ads/targeting/preview",
        json={**SEGMENT, "rule": "top_percent", "value": 150},
        headers=org.headers,
    )
    assert response.status_code == 400
    assert "value" in response.json()["message"]


def test_an_activation_accepts_a_segment_and_runs_in_the_background(
    stack: LocalStack, api: httpx.Client, org: ConnectedOrg
) -> None:
    # Given: a synced shop with both models trained
    version = synced_and_trained(api, org)

    # When: the top 100 users of the purchase model are previewed, then activated with the preview's
    # holdout seed (a string: it can exceed JavaScript's 2^53)
    segment = {**SEGMENT, "rule": "top_n", "value": 100}
    preview = api.post("/platform-ads/targeting/preview", json=segment, headers=org.headers).json()
    seed = preview["holdout"]["seed"]
    assert isinstance(seed, str)
    assert seed.isdigit()
    started = api.post(
        "/platform-ads/activations",
        json={"name": "Top 100", "segment": segment, "holdoutSeed": seed},
        headers=org.headers,
    )

    # Then: accepted at once, and activated by the state machine, whose SelectUsers step scored the
    # segment and recorded its provenance
    assert started.status_code == 202, started.text
    active = wait_for(stack, org, started.json()["audienceId"], "active")
    assert active["segment"]["datasetVersion"] == version
    assert active["segment"]["usersSelected"] == 100
    assert 0 < active["userCount"] <= 100
    # and kept the default 10 % holdout out of the upload, with its seed recorded
    holdout = active["holdout"]
    with_rows = 100 - active["segment"]["usersWithoutCustomerRow"]
    assert holdout["percent"] == 10
    assert holdout["holdoutUsers"] == with_rows // 10
    assert holdout["uploadedUsers"] == with_rows - holdout["holdoutUsers"]
    assert holdout["seed"] == seed
    assert active["userCount"] <= holdout["uploadedUsers"]
    # and uploaded exactly the users the preview said it would, after the holdout
    assert (holdout["holdoutUsers"], holdout["uploadedUsers"]) == (
        preview["holdout"]["heldOut"],
        preview["holdout"]["uploaded"],
    )
    assert active["userCount"] == preview["holdout"]["uploadedUsable"]
