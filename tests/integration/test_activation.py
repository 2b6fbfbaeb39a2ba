"""The activation state machine, executed for real in moto with its Lambda steps run in-process."""

from __future__ import annotations

import csv
import io
import json
import time
import uuid
from typing import Any

import httpx

from local.connected import ConnectedOrg, connected_org
from local.stack import LocalStack
from local.uploads import send_upload
from shared import wiring
from tests.integration.patience import BACKGROUND_JOB_SECONDS


def users(count: int) -> list[dict[str, Any]]:
    return [{"user_id": f"a{i}", "email": f"buyer{i}@example.com", "score": 0.9} for i in range(count)]


def wait_for(stack: LocalStack, org: ConnectedOrg, audience_id: str, status: str) -> dict[str, Any]:
    """Poll the audience list (as the dashboard does) until the audience reaches ``status``."""
    deadline = time.monotonic() + BACKGROUND_JOB_SECONDS
    with httpx.Client(base_url=stack.api_url, timeout=30) as api:
        while time.monotonic() < deadline:
            for audience in api.get("/platform-ads/audiences", headers=org.headers).json()["audiences"]:
                if audience["audienceId"] == audience_id and audience["status"] == status:
                    return dict(audience)
            time.sleep(0.2)
    raise AssertionError(f"audience {audience_id} never became {status}")


def executions(stack: LocalStack) -> list[dict[str, Any]]:
    arn = stack.physical["AudienceActivationStateMachine"].ref
    found: list[dict[str, Any]] = stack.client("stepfunctions").list_executions(stateMachineArn=arn)[
        "executions"
    ]
    return found


def ended_execution(stack: LocalStack, name: str) -> dict[str, Any]:
    """The activation execution ``name`` once Step Functions has ended it. The audience's status is
    written by the last task (MarkActive, RecordFailure), a moment before the execution enters its
    Succeed or Fail state: a poll of the audience does not say the execution has ended."""
    deadline = time.monotonic() + BACKGROUND_JOB_SECONDS
    while time.monotonic() < deadline:
        [execution] = [e for e in executions(stack) if e["name"] == name]
        if execution["status"] != "RUNNING":
            return execution
        time.sleep(0.2)
    raise AssertionError(f"execution {name} did not end")


def activate_upload(
    stack: LocalStack,
    api: httpx.Client,
    org: ConnectedOrg,
    lines: list[str],
    variables: dict[str, str],
    *,
    name: str,
    newline: str = "\n",
) -> dict[str, Any]:
    """Upload ``lines`` (a CSV list, joined by ``newline``), POST an activation ``name`` of it and
    wait until it is active, all with the runner's environment set to ``variables`` (the task
    limits); the active audience as the dashboard lists it."""
    assert stack.runner is not None
    with stack.runner.environment(**variables):
        link = api.post("/platform-ads/uploads", headers=org.headers).json()
        assert send_upload(link, newline.join(lines).encode()).status_code == 204
        response = api.post(
            "/platform-ads/activations",
            json={"name": name, "uploadId": link["uploadId"]},
            headers=org.headers,
        )
        assert response.status_code == 202, response.text
        return wait_for(stack, org, response.json()["audienceId"], "active")


def entered_states(stack: LocalStack, audience_id: str) -> list[str]:
    """The states the audience's first activation execution entered, in order, once it has ended."""
    execution = ended_execution(stack, f"{audience_id}-1")
    sfn = stack.client("stepfunctions")
    history = sfn.get_execution_history(executionArn=execution["executionArn"], maxResults=1000)["events"]
    return [e["stateEnteredEventDetails"]["name"] for e in history if "stateEnteredEventDetails" in e]


def test_an_activation_runs_to_active_in_the_state_machine(
    stack: LocalStack, api: httpx.Client, org: ConnectedOrg, sandbox: httpx.Client
) -> None:
    # When
    response = api.post(
        "/platform-ads/activations",
        json={"name": "Background buyers", "users": users(25_000)},
        headers=org.headers,
    )
    # Then: accepted at once, then active once the execution finishes
    assert response.status_code == 202, response.text
    accepted = response.json()
    assert accepted["status"] == "creating"
    active = wait_for(stack, org, accepted["audienceId"], "active")
    assert active["progress"]["batchesDone"] == active["progress"]["batchesTotal"] == 3
    members = sandbox.get(f"/audiences/{active['platformCustomAudienceId']}/members").json()["members"]
    assert sum(len(group["rows"]) for group in members) == 25_000
    assert ended_execution(stack, f"{accepted['audienceId']}-1")["status"] == "SUCCEEDED"


def test_a_repeated_start_with_the_same_key_starts_one_execution(
    stack: LocalStack, api: httpx.Client, org: ConnectedOrg
) -> None:
    headers = {**org.headers, "Idempotency-Key": f"key-{uuid.uuid4()}"}
    first = api.post(
        "/platform-ads/activations", json={"name": "Once", "users": users(5)}, headers=headers
    ).json()
    second = api.post(
        "/platform-ads/activations", json={"name": "Once", "users": users(5)}, headers=headers
    ).json()
    assert first["audienceId"] == second["audienceId"]
    assert [e["name"] for e in executions(stack)].count(f"{first['audienceId']}-1") == 1


def test_a_platform_refusal_fails_the_activation_with_its_remedy(
    stack: LocalStack, api: httpx.Client, sandbox: httpx.Client
) -> None:
    # Given: an ad account whose Custom Audience terms were never accepted
    sandbox.post("/scenario", json={"name": "terms_not_accepted"})
    org = connected_org(stack, api)
    try:
        # When
        accepted = api.post(
            "/platform-ads/activations", json={"name": "Refused", "users": users(5)}, headers=org.headers
        ).json()
        # Then
        failed = wait_for(stack, org, accepted["audienceId"], "failed")
        assert failed["failure"]["code"] == "platform_terms_not_accepted"
        assert "Custom Audience terms not accepted" in failed["failure"]["message"]
        assert "Accept the platform's Custom Audience terms" in failed["failure"]["remedy"]
        record = wiring.audience_store().get(org.org_id, accepted["audienceId"])
        assert record is not None
        assert record.status == "failed"
    finally:
        sandbox.post("/scenario", json={"name": "default"})


def test_a_list_too_large_for_a_request_is_uploaded_first_then_activated(
    stack: LocalStack, api: httpx.Client, org: ConnectedOrg, sandbox: httpx.Client
) -> None:
    # Given: 60,000 users as CSV (about 11 MB as JSON: over API Gateway's 10 MB body limit)
    lines = ["user_id,email,firstName,lastName,phone,score,country"]
    lines += [f"c{i},shopper{i}@example.com,Ana,Silva,07700 9{i % 100000:05d},0.8,GB" for i in range(60_000)]
    # When: it is uploaded, then activated by its upload id
    active = activate_upload(stack, api, org, lines, {}, name="Uploaded list")
    # Then
    assert active["userCount"] == 60_000
    members = sandbox.get(f"/audiences/{active['platformCustomAudienceId']}/members").json()["members"]
    assert sum(len(group["rows"]) for group in members) == 60_000


def test_a_list_larger_than_a_task_hashes_is_hashed_in_parts_and_uploaded_once_each(
    stack: LocalStack, api: httpx.Client, org: ConnectedOrg, sandbox: httpx.Client
) -> None:
    # Given: tasks that hash at most 20,000 users, and a list of 45,000 rows of which one in 100
    # repeats an earlier user_id (the repeat is a duplicate, whichever part the user falls in)
    lines = ["user_id,email,firstName,phone,country"]
    lines += [
        f"c{i - 50 if i % 100 == 99 else i},shopper{i}@example.com,Ana,07700 9{i:05d},GB"
        for i in range(45_000)
    ]
    # When
    active = activate_upload(stack, api, org, lines, {"ACTIVATION_PART_USERS": "20000"}, name="Parts")
    audience_id = active["audienceId"]

    # Then: NormaliseAndHash ran once per part (3), and every user reached the platform once, in one
    # upload session whose batches were numbered on from part to part and closed by the last one
    entered = entered_states(stack, audience_id)
    assert entered.count("NormaliseAndHash") == 3
    members = sandbox.get(f"/audiences/{active['platformCustomAudienceId']}/members").json()["members"]
    rows = [tuple(row) for group in members for row in group["rows"]]
    assert len(rows) == len(set(rows)) == 45_000 - 450
    assert active["userCount"] == 45_000 - 450
    calls = sandbox.get(
        "/requests", params={"path": f"/{active['platformCustomAudienceId']}/users$", "method": "POST"}
    ).json()["requests"]
    sessions = [c["params"]["session"] for c in calls if c["status"] == 200]
    sessions = [json.loads(s) if isinstance(s, str) else s for s in sessions]
    assert [s["batch_seq"] for s in sessions] == list(range(1, len(sessions) + 1))
    assert len(sessions) == active["progress"]["batchesTotal"] > 5  # a short batch ends each part
    assert [s["last_batch_flag"] for s in sessions] == [False] * (len(sessions) - 1) + [True]
    assert len({s["session_id"] for s in sessions}) == 1
    # And the list's countries were counted as it was read (where an advert delivers)
    record = wiring.audience_store().get(org.org_id, audience_id)
    assert record is not None
    assert record.activation is not None
    assert (record.activation.users_parts, record.activation.countries) == (3, ["GB"])


def test_a_list_larger_than_a_task_reads_is_selected_in_chunks_and_uploaded_once_each(
    stack: LocalStack, api: httpx.Client, org: ConnectedOrg, sandbox: httpx.Client
) -> None:
    # Given: SelectUsers tasks that read at most 300 kB of a list, and a list of 30,000 rows (about
    # 1.5 MB) whose names hold commas, quotes and line breaks, one in 100 repeating an earlier user_id
    lines = ["user_id,email,firstName,phone,country"]
    lines += [
        f"c{i - 50 if i % 100 == 99 else i},shopper{i}@example.com,"
        + ('"Ana, ""the\nsecond"""' if i % 7 == 0 else "Ana")
        + f",07700 9{i:05d},GB"
        for i in range(30_000)
    ]
    # When
    active = activate_upload(
        stack,
        api,
        org,
        lines,
        {"ACTIVATION_CHUNK_BYTES": "300000", "ACTIVATION_PART_USERS": "20000"},
        name="Chunks",
        newline="\r\n",
    )
    audience_id = active["audienceId"]

    # Then: SelectUsers ran once per chunk (the state machine looping on AllUsersSelected?), every
    # user reached the platform once, and the snapshot holds every row of the list
    entered = entered_states(stack, audience_id)
    assert entered.count("SelectUsers") >= 5
    members = sandbox.get(f"/audiences/{active['platformCustomAudienceId']}/members").json()["members"]
    rows = [tuple(row) for group in members for row in group["rows"]]
    assert len(rows) == len(set(rows)) == 30_000 - 300
    record = wiring.audience_store().get(org.org_id, audience_id)
    assert record is not None
    assert record.activation is not None
    assert record.activation.users_chunks == entered.count("SelectUsers")
    assert record.snapshot_key is not None
    snapshot = wiring.data_blobs().get(record.snapshot_key).decode("utf-8-sig")
    assert len(list(csv.reader(io.StringIO(snapshot, newline="")))) == 1 + 30_000


def test_a_bad_row_of_an_upload_fails_the_activation_naming_the_line_and_column(
    stack: LocalStack, api: httpx.Client, org: ConnectedOrg, sandbox: httpx.Client
) -> None:
    # Given: a list whose header is right and whose line 2 has a score that is not a number
    link = api.post("/platform-ads/uploads", headers=org.headers).json()
    send_upload(link, b"user_id,score\nu1,high\n").raise_for_status()
    # When: accepting it reads only the header (a 2M-row list must not near the gateway's 30 s)
    response = api.post(
        "/platform-ads/activations", json={"name": "Bad", "uploadId": link["uploadId"]}, headers=org.headers
    )
    # Then: SelectUsers reads every row and fails the activation, naming the row, never its value
    assert response.status_code == 202, response.text
    failed = wait_for(stack, org, response.json()["audienceId"], "failed")
    assert failed["failure"]["code"] == "validation_error"
    assert failed["failure"]["step"] == "select_users"
    assert "line 2: score" in failed["failure"]["message"]
    assert "high" not in failed["failure"]["message"]
    assert "upload the file again" in failed["failure"]["remedy"]
    assert failed["platformCustomAudienceId"] is None


def test_an_upload_without_a_user_id_column_is_refused_at_once(api: httpx.Client, org: ConnectedOrg) -> None:
    # Given
    link = api.post("/platform-ads/uploads", headers=org.headers).json()
    send_upload(link, b"email,score\na@example.com,1\n").raise_for_status()
    # When
    response = api.post(
        "/platform-ads/activations", json={"name": "Bad", "uploadId": link["uploadId"]}, headers=org.headers
    )
    # Then
    assert response.status_code == 400
    assert response.json()["error"]["field"] == "uploadId"
    assert "user_id column" in response.json()["message"]


def test_an_unknown_upload_is_not_found(api: httpx.Client, org: ConnectedOrg) -> None:
    response = api.post(
        "/platform-ads/activations", json={"name": "None", "uploadId": str(uuid.uuid4())}, headers=org.headers
    )
    assert response.status_code == 404
    assert "upload link" in response.json()["error"]["remedy"]


def test_an_upload_over_the_size_cap_is_refused_naming_it(
    stack: LocalStack, api: httpx.Client, org: ConnectedOrg
) -> None:
    # Given: a cap of 1 KB in the functions' environment (read at their start), and a 3 KB list sent
    # to the upload link: its policy caps the size, which S3 enforces on AWS but moto's S3 does not
    assert stack.runner is not None
    with stack.runner.environment(AUDIENCE_UPLOAD_MAX_BYTES="1000"):
        link = api.post("/platform-ads/uploads", headers=org.headers).json()
        assert link["maxBytes"] == 1000
        lines = ["user_id,email"] + [f"u{i},buyer{i}@example.com" for i in range(120)]
        assert send_upload(link, "\n".join(lines).encode()).status_code == 204
        # When
        response = api.post(
            "/platform-ads/activations",
            json={"name": "Too big", "uploadId": link["uploadId"]},
            headers=org.headers,
        )
    # Then: refused by the service's own check, before any of it is read
    assert response.status_code == 400, response.text
    assert response.json()["error"]["field"] == "uploadId"
    assert "the limit is 1,000" in response.json()["message"]
