"""The activation pipeline end to end in the local stack: the state machine's history reads as its
steps, the status endpoint shows where it stands, and the defects found by the probe stay fixed
(issue 12): duplicates under a race, a reused Idempotency-Key, a failed activation that could not be
retried, and runs that are throttled, lose their token or lose their worker mid-batch. Each run is
compared with what the sandbox received: nobody lost, nobody twice."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest

from local.connected import ConnectedOrg, reconnect
from local.stack import LocalStack
from tests.integration.patience import BACKGROUND_JOB_SECONDS
from tests.integration.test_activation import ended_execution, wait_for

PROSPECTING = {"objective": "prospecting", "lookalikeSize": 2, "lookalikeCountry": "GB"}


def users(count: int, prefix: str = "p") -> list[dict[str, Any]]:
    return [
        {"user_id": f"{prefix}{i}", "email": f"{prefix}.buyer{i}@example.com", "score": 0.8, "country": "GB"}
        for i in range(count)
    ]


def advert() -> dict[str, Any]:
    return {
        "campaignName": "Spring sale",
        "dailyBudget": "20.00",
        "headline": "Back in stock",
        "message": "The trainers you looked at are back.",
        "destinationUrl": "https://shop.example.com/products/sku-1?ref=ads",
    }


def status_of(api: httpx.Client, org: ConnectedOrg, audience_id: str) -> dict[str, Any]:
    response = api.get(f"/platform-ads/activations/{audience_id}", headers=org.headers)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def wait_until(
    api: httpx.Client,
    org: ConnectedOrg,
    audience_id: str,
    *states: str,
    seconds: float = BACKGROUND_JOB_SECONDS,
) -> dict[str, Any]:
    """Poll the activation's status (as the dashboard's progress bar does) until its state is one of
    ``states``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        status = status_of(api, org, audience_id)
        if status["state"] in states:
            return status
        time.sleep(0.25)
    raise AssertionError(f"activation {audience_id} never reached {states}: {status}")


def entered_states(stack: LocalStack, execution_name: str) -> list[str]:
    """The states the execution entered, read once it has ended (the activation's status is written
    by its last task, before the execution enters its final state)."""
    sfn = stack.client("stepfunctions")
    execution = ended_execution(stack, execution_name)
    events = sfn.get_execution_history(executionArn=execution["executionArn"], maxResults=1000)["events"]
    return [e["stateEnteredEventDetails"]["name"] for e in events if "stateEnteredEventDetails" in e]


def collapsed(names: list[str]) -> list[str]:
    """The states in the order they were first entered (a loop's states shown once)."""
    return list(dict.fromkeys(names))


def received(sandbox: httpx.Client, platform_audience_id: str) -> list[tuple[str, ...]]:
    """Every member row the platform holds for the audience."""
    body = sandbox.get(f"/audiences/{platform_audience_id}/members").json()
    return [tuple(row) for group in body["members"] for row in group["rows"]]


def accepted_batches(sandbox: httpx.Client, platform_audience_id: str) -> list[int]:
    """The batch_seq of every upload call the platform accepted for the audience, in order."""
    calls = sandbox.get("/requests", params={"path": f"/{platform_audience_id}/users$", "method": "POST"})
    sessions = [call["params"]["session"] for call in calls.json()["requests"] if call["status"] == 200]
    # The service uploads a JSON body, so the session is logged as the object itself.
    return [int((json.loads(s) if isinstance(s, str) else s)["batch_seq"]) for s in sessions]


def assert_everyone_once(sandbox: httpx.Client, status: dict[str, Any], count: int) -> None:
    [seed] = [o["platformId"] for o in status["platformObjects"] if o["kind"] == "custom_audience"]
    rows = received(sandbox, seed)
    assert len(rows) == count
    assert len(set(rows)) == count
    assert status["progress"]["usersUploaded"] == count


def test_a_50k_prospecting_activation_with_publish_advert_runs_every_step(
    stack: LocalStack, api: httpx.Client, org: ConnectedOrg, sandbox: httpx.Client
) -> None:
    # Given 50,000 users for a prospecting audience, and an advert to publish once it exists
    body = {"name": "Fifty thousand", "productId": "sku-1", "users": users(50_000), **PROSPECTING}

    # When
    response = api.post("/platform-ads/activations", json={**body, "publish": advert()}, headers=org.headers)

    # Then accepted at once with where to watch it; the activation runs to the end
    assert response.status_code == 202, response.text
    audience_id = response.json()["audienceId"]
    assert response.json()["activationUrl"] == f"/platform-ads/activations/{audience_id}"
    done = wait_until(api, org, audience_id, "succeeded", "failed")
    assert (done["state"], done["status"], done["step"], done["error"]) == (
        "succeeded",
        "active",
        "done",
        None,
    )
    assert done["progress"] == {
        "usersTotal": 50_000,
        "rowsTotal": 50_000,
        "usersUploaded": 50_000,
        "batchesDone": 5,
        "batchesTotal": 5,
        "percent": 100,
    }
    assert done["steps"] == [
        "select_users",
        "normalise_and_hash",
        "create_custom_audience",
        "upload_batches",
        "wait_for_seed",
        "create_lookalike",
        "publish_advert",
        "mark_active",
    ]
    kinds = [o["kind"] for o in done["platformObjects"]]
    assert kinds == ["custom_audience", "lookalike", "campaign", "adset", "adcreative", "ad"]
    assert all(o["platformId"] for o in done["platformObjects"])
    assert_everyone_once(sandbox, done, 50_000)
    # And the execution's history reads as the pipeline's steps
    assert collapsed(entered_states(stack, done["executionName"])) == [
        "ClaimAudience",
        "Claimed?",
        "SelectUsers",
        "AllUsersSelected?",
        "NormaliseAndHash",
        "AllPartsHashed?",
        "CreateCustomAudience",
        "UploadBatches",
        "AllBatchesSent?",
        "CheckSeedProcessed",
        "SeedProcessed?",
        "AfterSeed?",
        "CreateLookalike",
        "AfterLookalike?",
        "PublishAdvert",
        "AdvertPublished?",
        "MarkActive",
        "Activated",
    ]


def test_an_activation_and_a_synchronous_create_with_one_key_make_one_platform_audience(
    api: httpx.Client, org: ConnectedOrg, sandbox: httpx.Client
) -> None:
    # Given one Idempotency-Key and one body, sent to both routes 0.5 s apart
    body = {"name": f"Raced {uuid.uuid4().hex[:6]}", "users": users(25_000, "r")}
    headers = {**org.headers, "Idempotency-Key": f"race-{uuid.uuid4()}"}
    answers: dict[str, httpx.Response] = {}

    def send(route: str) -> None:
        with httpx.Client(base_url=str(api.base_url), timeout=60) as client:
            answers[route] = client.post(route, json=body, headers=headers)

    # When
    first = threading.Thread(target=send, args=("/platform-ads/activations",))
    first.start()
    time.sleep(0.5)
    send("/platform-ads/audiences")
    first.join()

    # Then both answer for the same audience, and the platform has one audience with everybody once
    assert answers["/platform-ads/activations"].status_code == 202
    assert answers["/platform-ads/audiences"].status_code in (201, 202)
    audience_id = answers["/platform-ads/activations"].json()["audienceId"]
    assert answers["/platform-ads/audiences"].json()["audienceId"] == audience_id
    done = wait_until(api, org, audience_id, "succeeded", "failed")
    assert done["state"] == "succeeded"
    created = sandbox.get("/requests", params={"path": "/customaudiences$", "method": "POST"}).json()
    named = [c for c in created["requests"] if c["params"].get("name") == body["name"]]
    assert len(named) == 1
    assert_everyone_once(sandbox, done, 25_000)


@pytest.mark.parametrize(
    ("first_route", "second_route"),
    [
        ("/platform-ads/activations", "/platform-ads/activations"),
        ("/platform-ads/audiences", "/platform-ads/audiences"),
        ("/platform-ads/activations", "/platform-ads/audiences"),
        ("/platform-ads/audiences", "/platform-ads/activations"),
    ],
)
def test_a_key_reused_with_another_body_is_refused_on_both_routes_and_across_them(
    api: httpx.Client, org: ConnectedOrg, first_route: str, second_route: str
) -> None:
    # Given a request made with a key
    headers = {**org.headers, "Idempotency-Key": f"reuse-{uuid.uuid4()}"}
    first = api.post(first_route, json={"name": "First list", "users": users(5, "a")}, headers=headers)
    assert first.status_code in (201, 202), first.text

    # When the key comes back with another list
    second = api.post(second_route, json={"name": "First list", "users": users(5, "b")}, headers=headers)

    # Then it is refused, naming the header and what to do; the second list was not taken
    assert second.status_code == 422, second.text
    assert second.json()["error"]["code"] == "idempotency_key_reused"
    assert second.json()["error"]["field"] == "Idempotency-Key"
    assert "new key" in second.json()["error"]["remedy"]


def test_a_run_whose_token_is_revoked_midway_fails_with_the_remedy_and_resumes_once_reconnected(
    stack: LocalStack, api: httpx.Client, org: ConnectedOrg, sandbox: httpx.Client
) -> None:
    # Given the platform revokes the token after two batches of five were acknowledged
    sandbox.post(
        "/faults",
        json={"kind": "revoke_token", "subcode": 460, "method": "POST", "path": "/users$", "after": 2},
    )
    headers = {**org.headers, "Idempotency-Key": f"revoked-{uuid.uuid4()}"}
    body = {"name": "Revoked midway", "users": users(50_000, "t")}

    # When
    audience_id = api.post("/platform-ads/activations", json=body, headers=headers).json()["audienceId"]

    # Then it fails at the upload, saying to reconnect, with the two batches kept
    failed = wait_until(api, org, audience_id, "failed", "succeeded")
    assert (failed["state"], failed["status"], failed["step"]) == ("failed", "failed", "upload_batches")
    assert failed["error"]["step"] == "upload_batches"
    assert failed["error"]["code"] == "platform_reconnect_required"
    assert "connect" in failed["error"]["remedy"].lower()
    assert failed["progress"]["batchesDone"] == 2

    # When the user reconnects and repeats the request
    sandbox.delete("/faults")
    reconnect(stack, api, org)
    retried = api.post("/platform-ads/activations", json=body, headers=headers)

    # Then a second attempt (its own execution) resumes after batch 2 and finishes
    assert retried.status_code == 202
    assert retried.json()["audienceId"] == audience_id
    done = wait_until(api, org, audience_id, "succeeded", "failed")
    assert (done["state"], done["attempt"], done["executionName"]) == ("succeeded", 2, f"{audience_id}-2")
    [seed] = [o["platformId"] for o in done["platformObjects"] if o["kind"] == "custom_audience"]
    assert accepted_batches(sandbox, seed) == [1, 2, 3, 4, 5]
    assert_everyone_once(sandbox, done, 50_000)


SEED_CHECK = ("check_seed", "wait_for_seed")  # checking the seed, or waiting to check it again


def test_a_retry_without_reconnecting_fails_at_the_step_that_needs_the_platform_not_a_finished_one(
    api: httpx.Client, org: ConnectedOrg, sandbox: httpx.Client
) -> None:
    # Given an activation whose token was revoked after its whole upload, when the seed was checked
    sandbox.post(
        "/faults",
        json={"kind": "revoke_token", "subcode": 460, "method": "GET", "path": r"^/\d+$"},
    ).raise_for_status()
    headers = {**org.headers, "Idempotency-Key": f"seed-revoked-{uuid.uuid4()}"}
    body = {"name": "Revoked at the seed check", "users": users(20, "s")}
    audience_id = api.post("/platform-ads/activations", json=body, headers=headers).json()["audienceId"]
    failed = wait_until(api, org, audience_id, "failed", "succeeded")
    assert failed["error"]["code"] == "platform_reconnect_required"
    assert failed["error"]["step"] in SEED_CHECK
    assert failed["progress"]["batchesDone"] == failed["progress"]["batchesTotal"]

    # When the user presses Retry without reconnecting
    retried = api.post(f"/platform-ads/activations/{audience_id}/retry", headers=org.headers)
    assert retried.status_code == 202, retried.text
    deadline = time.monotonic() + BACKGROUND_JOB_SECONDS
    again = status_of(api, org, audience_id)
    while not (again["attempt"] == 2 and again["state"] in ("failed", "succeeded")):
        assert time.monotonic() < deadline, f"the second attempt never ended: {again}"
        time.sleep(0.25)
        again = status_of(api, org, audience_id)

    # Then it fails again at the seed check: the finished upload is not the step shown as failed
    assert again["error"]["code"] == "platform_reconnect_required"
    assert again["step"] in SEED_CHECK
    assert again["error"]["step"] in SEED_CHECK
    sandbox.delete("/faults").raise_for_status()


def test_a_failed_activation_is_retried_in_a_new_execution_after_the_cause_is_fixed(
    api: httpx.Client, org: ConnectedOrg, sandbox: httpx.Client
) -> None:
    # Given an activation that failed because the Custom Audience terms were not accepted
    sandbox.post(
        "/faults",
        json={
            "kind": "error",
            "method": "POST",
            "path": "/customaudiences$",
            "code": 200,
            "subcode": 1870090,
        },
    )
    headers = {**org.headers, "Idempotency-Key": f"terms-{uuid.uuid4()}"}
    body = {"name": "Terms later", "users": users(20, "k")}
    audience_id = api.post("/platform-ads/activations", json=body, headers=headers).json()["audienceId"]
    failed = wait_until(api, org, audience_id, "failed", "succeeded")
    assert failed["error"]["code"] == "platform_terms_not_accepted"
    assert failed["error"]["step"] == "create_custom_audience"

    # When the terms are accepted (the fault is gone) and the user presses Retry
    sandbox.delete("/faults")
    retried = api.post(f"/platform-ads/activations/{audience_id}/retry", headers=org.headers)

    # Then it runs again, in a new execution, to the end
    assert retried.status_code == 202, retried.text
    assert retried.json()["activationUrl"] == f"/platform-ads/activations/{audience_id}"
    done = wait_until(api, org, audience_id, "succeeded", "failed")
    assert (done["state"], done["attempt"], done["error"]) == ("succeeded", 2, None)
    assert_everyone_once(sandbox, done, 20)
    # And an active audience cannot be retried
    again = api.post(f"/platform-ads/activations/{audience_id}/retry", headers=org.headers)
    assert again.status_code == 409
    assert again.json()["error"]["remedy"]


def test_a_throttled_run_waits_in_the_state_machine_and_loses_nobody(
    stack: LocalStack, api: httpx.Client, org: ConnectedOrg, sandbox: httpx.Client
) -> None:
    # Given the platform throttles the uploads after the first batch, more often than the client
    # retries in-process
    sandbox.post(
        "/faults",
        json={
            "kind": "throttle",
            "method": "POST",
            "path": "/users$",
            "code": 80003,
            "regain_minutes": 0,
            "count": 8,
            "after": 1,
        },
    )

    # When
    body = {"name": "Throttled", "users": users(30_000, "h")}
    audience_id = api.post("/platform-ads/activations", json=body, headers=org.headers).json()["audienceId"]

    # Then the first execution waited in WaitForThrottle (a wait, not a failed attempt) and finished
    # with everybody once, and the audience is listed active
    done = wait_until(api, org, audience_id, "succeeded", "failed")
    assert done["state"] == "succeeded"
    assert done["executionName"] == f"{audience_id}-1"
    assert "WaitForThrottle" in entered_states(stack, done["executionName"])
    assert_everyone_once(sandbox, done, 30_000)
    assert wait_for(stack, org, audience_id, "active")["audienceId"] == audience_id


@contextmanager
def worker_killed_after_upload(stack: LocalStack, count: int) -> Iterator[list[str]]:
    """Kill the activation's worker once the platform has taken its ``count``-th upload call, before
    the answer reaches it (the process dies: no ``except``/saving code runs)."""
    seen: list[str] = []

    def hook(method: str, path: str, status: int) -> None:
        if method == "POST" and path.endswith("/users"):
            seen.append(path)
            if len(seen) == count:
                assert stack.runner is not None
                stack.runner.kill_running("ActivationStepFunction")

    stack.sandbox.answer_hooks.append(hook)
    try:
        yield seen
    finally:
        stack.sandbox.answer_hooks.remove(hook)


def test_a_run_whose_worker_is_killed_mid_batch_resumes_and_sends_that_batch_again(
    stack: LocalStack, api: httpx.Client, org: ConnectedOrg, sandbox: httpx.Client
) -> None:
    # Given a worker that dies after the platform took its second batch, before recording it
    with worker_killed_after_upload(stack, 2):
        # When
        body = {"name": "Killed midway", "users": users(30_000, "w")}
        audience_id = api.post("/platform-ads/activations", json=body, headers=org.headers).json()[
            "audienceId"
        ]
        done = wait_until(api, org, audience_id, "succeeded", "failed")

    # Then the state machine retried the step (Runtime.ExitError), which resent batch 2 in the same
    # session (the platform counts it once) and finished with everybody once
    assert done["state"] == "succeeded"
    assert done["attempt"] == 1
    [seed] = [o["platformId"] for o in done["platformObjects"] if o["kind"] == "custom_audience"]
    assert accepted_batches(sandbox, seed) == [1, 2, 2, 3]
    assert_everyone_once(sandbox, done, 30_000)
