"""Value-based seeds through the local stack (issue 15, item 3): a prospecting activation whose seed is
created value-based on the sandbox with every member's value, and whose lookalike is built from it
(docs/platform-notes.md §4.1); an uploaded list with its own value column; and a seed without values,
refused with its cause and remedy before anything is created on the platform."""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from typing import Any

import httpx
import pytest

from local.connected import ConnectedOrg
from local.stack import LocalStack
from local.uploads import send_upload
from tests.integration.test_activation import wait_for
from tests.integration.test_data_source import shop_files
from tests.integration.test_wizard import SEGMENT, synced_and_trained

PROSPECTING = {"objective": "prospecting", "lookalikeSize": 1, "lookalikeCountry": "GB"}


def audience_of(api: httpx.Client, org: ConnectedOrg, audience_id: str) -> dict[str, Any]:
    listed = api.get("/platform-ads/audiences", headers=org.headers).json()["audiences"]
    [audience] = [a for a in listed if a["audienceId"] == audience_id]
    return dict(audience)


def values_by_member(sandbox: httpx.Client, platform_id: str) -> tuple[bool, dict[str, float | None]]:
    """Whether the sandbox holds the audience as value-based, and each member's value by EXTERN_ID."""
    held = sandbox.get(f"/audiences/{platform_id}/members").json()
    values: dict[str, float | None] = {}
    for group in held["members"]:
        assert group["schema"][0] == "EXTERN_ID"
        values.update({row[0]: value for row, value in zip(group["rows"], group["values"], strict=True)})
    return bool(held["is_value_based"]), values


def upload_list(api: httpx.Client, org: ConnectedOrg, lines: list[str]) -> str:
    link = api.post("/platform-ads/uploads", headers=org.headers).json()
    sent = send_upload(link, "\n".join(lines).encode())
    assert sent.status_code == 204, sent.text
    upload_id: str = link["uploadId"]
    return upload_id


def test_a_value_based_prospecting_activation_uploads_every_members_predicted_value(
    stack: LocalStack, api: httpx.Client, org: ConnectedOrg, sandbox: httpx.Client
) -> None:
    # Given: a shop synced and trained, and the average order of each customer in its orders file
    synced_and_trained(api, org)
    orders = csv.DictReader(io.StringIO(shop_files(n_users=500, seed=11)["orders"].decode()))
    spend: dict[str, float] = defaultdict(float)
    order_ids: dict[str, set[str]] = defaultdict(set)
    for line in orders:
        spend[line["user_id"]] += float(line["amount"])
        order_ids[line["user_id"]].add(line["order_id"])

    # When: a prospecting activation of the segment asks for a value-based lookalike
    response = api.post(
        "/platform-ads/activations",
        json={"name": "Valuable lookalike", "segment": SEGMENT, "valueBased": True, **PROSPECTING},
        headers=org.headers,
    )

    # Then: it runs through the state machine to active
    assert response.status_code == 202, response.text
    audience_id = response.json()["audienceId"]
    active = wait_for(stack, org, audience_id, "active")
    assert active["valueSeed"] == {
        "source": "predicted_spend",
        "column": None,
        "rowsWithValue": active["userCount"],
    }
    # And the sandbox holds the seed as value-based, every member with its value
    seed_id = active["platformCustomAudienceId"]
    value_based, values = values_by_member(sandbox, seed_id)
    assert value_based
    assert len(values) == active["userCount"] >= 100
    assert all(value is not None and value >= 0 for value in values.values())
    # And each value is the customer's purchase probability (the snapshot's score) times their own
    # average order (spend over orders in the synced file)
    link = api.get(f"/platform-ads/audiences/{audience_id}/snapshot", headers=org.headers).json()
    scores = {
        row["user_id"]: float(row["score"])
        for row in csv.DictReader(io.StringIO(httpx.get(link["url"]).content.decode("utf-8-sig")))
    }
    for user_id, value in values.items():
        expected = scores[user_id] * spend[user_id] / len(order_ids[user_id])
        assert value == pytest.approx(expected, rel=1e-6, abs=1e-4), user_id
    assert len(set(values.values())) > 1  # the values tell the customers apart
    # And the lookalike was built from that seed, asked for as a value-based one
    lookalike_id = active["lookalike"]["platformAudienceId"]
    state = sandbox.get("/state").json()
    [lookalike] = [a for a in state["audiences"] if a["id"] == lookalike_id]
    assert lookalike["subtype"] == "LOOKALIKE"
    assert lookalike["origin_audience_id"] == seed_id
    asked = sandbox.get("/requests", params={"path": "customaudiences$", "method": "POST"}).json()["requests"]
    specs = [r["params"].get("lookalike_spec") for r in asked if r["params"].get("subtype") == "LOOKALIKE"]
    assert any('"type":"custom_ratio"' in str(spec) for spec in specs), specs


def test_an_uploaded_list_seeds_a_value_based_lookalike_with_its_own_value_column(
    stack: LocalStack, api: httpx.Client, org: ConnectedOrg, sandbox: httpx.Client
) -> None:
    # Given: 150 customers uploaded with their lifetime value in a column named ltv (one left blank)
    lines = ["user_id,email,ltv"] + [
        f"v{i},valued{i}@example.com,{'' if i == 0 else i * 2.5}" for i in range(150)
    ]
    upload_id = upload_list(api, org, lines)

    # When: the audience is created synchronously as a value-based prospecting seed
    created = api.post(
        "/platform-ads/audiences",
        json={
            "name": "Own values",
            "uploadId": upload_id,
            "valueBased": True,
            "valueColumn": "ltv",
            **PROSPECTING,
        },
        headers=org.headers,
    )

    # Then: every member is on the sandbox with the value of its row, the blank one without a value
    assert created.status_code == 201, created.text
    body = created.json()
    value_based, values = values_by_member(sandbox, body["platformCustomAudienceId"])
    assert value_based
    assert values == {f"v{i}": (None if i == 0 else i * 2.5) for i in range(150)}
    assert body["lookalike"]["platformAudienceId"]
    assert audience_of(api, org, body["audienceId"])["valueSeed"] == {
        "source": "column",
        "column": "ltv",
        "rowsWithValue": 149,
    }


def test_a_seed_without_values_fails_the_activation_with_its_cause_and_remedy(
    stack: LocalStack, api: httpx.Client, org: ConnectedOrg, sandbox: httpx.Client
) -> None:
    # Given: 150 customers whose value column is empty for everyone
    upload_id = upload_list(
        api, org, ["user_id,email,ltv"] + [f"n{i},novalue{i}@example.com," for i in range(150)]
    )

    # When: a value-based prospecting activation is started with them
    response = api.post(
        "/platform-ads/activations",
        json={
            "name": "No values",
            "uploadId": upload_id,
            "valueBased": True,
            "valueColumn": "ltv",
            **PROSPECTING,
        },
        headers=org.headers,
    )

    # Then: it is accepted, then fails, recording why and what to do
    assert response.status_code == 202, response.text
    failed = wait_for(stack, org, response.json()["audienceId"], "failed")
    failure = failed["failure"]
    assert failure["code"] == "validation_error"
    assert failure["step"] == "normalise_and_hash"
    assert "None of the 150 customers to upload has a value in the column 'ltv'" in failure["message"]
    assert "refuse a value-based lookalike" in failure["message"]
    assert "Fill the column with each customer's value" in failure["remedy"]
    # And nothing was created on the platform for it
    assert failed["platformCustomAudienceId"] is None
    names = [a["name"] for a in sandbox.get("/state").json()["audiences"]]
    assert "No values" not in names
