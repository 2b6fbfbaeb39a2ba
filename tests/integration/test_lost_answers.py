"""Creates that survive a lost answer: the platform makes the object but its answer never arrives
(the sandbox's ``lost_answer`` fault, HTTP 500 code 2). Every create carries a marker the service
chose before sending; the retry looks for it on the ad account and adopts what it finds, so the
account holds exactly one object of each kind (issue 25, item 1)."""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from local.connected import ConnectedOrg
from tests.integration.test_audiences import body, members


def marked(sandbox: httpx.Client, marker: str) -> list[dict[str, Any]]:
    """The live audiences on the sandbox whose description carries ``marker``."""
    audiences = sandbox.get("/state").json()["audiences"]
    return [a for a in audiences if f"[ref {marker}]" in (a["description"] or "") and not a["deleted"]]


def create_twice(
    api: httpx.Client, org: ConnectedOrg, request: dict[str, Any]
) -> tuple[httpx.Response, httpx.Response]:
    """The request, then its retry with the same Idempotency-Key (as the dashboard and SDKs retry)."""
    headers = {**org.headers, "Idempotency-Key": f"key-{uuid.uuid4()}"}
    first = api.post("/platform-ads/audiences", json=request, headers=headers)
    return first, api.post("/platform-ads/audiences", json=request, headers=headers)


def test_a_custom_audience_whose_answer_was_lost_is_adopted_not_created_again(
    api: httpx.Client, org: ConnectedOrg, sandbox: httpx.Client
) -> None:
    # Given: the platform creates the custom audience, and its answer is lost
    sandbox.post(
        "/faults", json={"kind": "lost_answer", "method": "POST", "path": "/customaudiences$"}
    ).raise_for_status()
    # When: the create fails, and is retried
    failed, retried = create_twice(api, org, body(150))
    # Then: the retry finishes the audience the lost create made; the account has one
    assert failed.status_code == 502, failed.text
    assert retried.status_code == 201, retried.text
    created = retried.json()
    found = marked(sandbox, f"sam-audience-{created['audienceId']}")
    assert [a["id"] for a in found] == [created["platformCustomAudienceId"]]
    assert len(members(sandbox, created["platformCustomAudienceId"])) == 150


def test_a_lookalike_whose_answer_was_lost_is_adopted_not_created_again(
    api: httpx.Client, org: ConnectedOrg, sandbox: httpx.Client
) -> None:
    # Given: the seed is created; the lookalike's create runs and its answer is lost
    sandbox.post(
        "/faults",
        json={"kind": "lost_answer", "method": "POST", "path": "/customaudiences$", "after": 1},
    ).raise_for_status()
    request = body(150, objective="prospecting", lookalikeSize=2, lookalikeCountry="GB")
    # When
    failed, retried = create_twice(api, org, request)
    # Then: one seed and one lookalike on the account, the lookalike the one the lost create made
    assert failed.status_code == 502, failed.text
    assert retried.status_code == 201, retried.text
    created = retried.json()
    seeds = marked(sandbox, f"sam-audience-{created['audienceId']}")
    lookalikes = marked(sandbox, f"sam-lookalike-{created['audienceId']}")
    assert [a["id"] for a in seeds] == [created["platformCustomAudienceId"]]
    assert [a["id"] for a in lookalikes] == [created["lookalike"]["platformAudienceId"]]
    assert created["lookalike"]["status"] == "active"
