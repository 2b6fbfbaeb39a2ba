"""A task that dies mid-way (issue 25, item 6): each step of the activation state machine is killed
(the process dies, as the out-of-memory killer or a crash would: no ``except`` or saving code runs)
at its first write to AWS, and each platform create is killed after the platform made the object but
before its answer reached the step. Step Functions retries the task (``Runtime.ExitError``) and the
step resumes from what it committed: every user uploaded once, in one upload session, and exactly one
object of each kind on the platform.

The kill is the local runner's test hook (``FunctionRunner.kill_running`` for the invocation whose
event names the step), fired from the stack's AWS hook (the step's own role signs the call) or the
sandbox's answer hook (``task_kills.py``).
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import httpx
import pytest

from local.connected import ConnectedOrg
from local.stack import LocalStack
from local.uploads import send_upload
from tests.integration.task_kills import action_is, killed_after_answer, killed_at_write
from tests.integration.test_activation_pipeline import (
    PROSPECTING,
    advert,
    assert_everyone_once,
    users,
    wait_until,
)

FUNCTION = "ActivationStepFunction"
USERS = 12_000  # two upload batches
STEPS = [
    "claim",
    "select_users",
    "normalise_and_hash",
    "create_custom_audience",
    "upload_batches",
    "check_seed",
    "create_lookalike",
    "publish_advert",
    "mark_active",
]
# The platform edges each create posts to, and how many objects of each a whole run makes.
EDGES = {"customaudiences": 2, "campaigns": 1, "adsets": 1, "adcreatives": 1, "ads": 1}


def objects_made(sandbox: httpx.Client) -> Counter[str]:
    """The creates the platform carried out on the ad account, by edge (validations left out)."""
    made: Counter[str] = Counter()
    for call in sandbox.get("/requests", params={"method": "POST"}).json()["requests"]:
        edge = call["path"].rsplit("/", 1)[-1]
        options = json.dumps(call.get("params", {}).get("execution_options", ""))
        if (
            edge in EDGES
            and call["path"].count("/") == 2
            and call["status"] == 200
            and "validate_only" not in options
        ):
            made[edge] += 1
    return made


def activate(api: httpx.Client, org: ConnectedOrg, name: str) -> dict[str, Any]:
    body = {"name": name, "productId": "sku-1", "users": users(USERS, name[:3]), **PROSPECTING}
    started = api.post("/platform-ads/activations", json={**body, "publish": advert()}, headers=org.headers)
    assert started.status_code == 202, started.text
    return wait_until(api, org, started.json()["audienceId"], "succeeded", "failed")


def assert_whole_and_once(sandbox: httpx.Client, done: dict[str, Any]) -> None:
    assert (done["state"], done["status"], done["error"]) == ("succeeded", "active", None), done
    assert done["attempt"] == 1  # the state machine's retry, not a new attempt by the marketer
    assert_everyone_once(sandbox, done, USERS)
    assert objects_made(sandbox) == EDGES
    sessions = {
        (json.loads(s) if isinstance(s, str) else s)["session_id"]
        for call in sandbox.get("/requests", params={"path": "/users$", "method": "POST"}).json()["requests"]
        if call["status"] == 200 and (s := call["params"]["session"])
    }
    assert len(sessions) == 1


@pytest.mark.parametrize("action", STEPS)
def test_a_step_killed_at_its_first_write_is_retried_and_resumes_from_what_it_committed(
    stack: LocalStack, api: httpx.Client, org: ConnectedOrg, sandbox: httpx.Client, action: str
) -> None:
    # Given: the activation's task dies at the first write of this step
    sandbox.delete("/requests")
    with killed_at_write(stack, FUNCTION, action_is(action)) as killed:
        # When a prospecting activation with Publish advert runs
        done = activate(api, org, f"Killed in {action}")
    # Then the task was killed there, retried, and the run is whole: everybody once, one session,
    # one object of each kind on the platform
    assert killed, f"no write was seen in {action}"
    assert_whole_and_once(sandbox, done)


@pytest.mark.parametrize(
    ("action", "edge"),
    [
        ("create_custom_audience", "customaudiences"),
        ("create_lookalike", "customaudiences"),
        ("publish_advert", "campaigns"),
        ("publish_advert", "ads"),
    ],
)
def test_a_create_whose_task_dies_before_the_answer_is_adopted_not_made_twice(
    stack: LocalStack, api: httpx.Client, org: ConnectedOrg, sandbox: httpx.Client, action: str, edge: str
) -> None:
    # Given: the platform makes the object, and the task dies before its answer arrives
    sandbox.delete("/requests")
    with killed_after_answer(stack, FUNCTION, action_is(action), f"/{edge}") as killed:
        # When
        done = activate(api, org, f"Lost {edge} in {action}")
    # Then the retried step found the object by its marker and adopted it: one of each kind
    assert killed, f"no {edge} create was seen in {action}"
    assert_whole_and_once(sandbox, done)


def test_a_chunk_of_a_list_killed_at_a_write_is_read_again_and_everyone_is_uploaded_once(
    stack: LocalStack, api: httpx.Client, org: ConnectedOrg, sandbox: httpx.Client
) -> None:
    # Given: a list read in chunks of 100 kB (about 2,400 users each, split into 2 parts), and the
    # SelectUsers task dying at its fifth write to S3 (in the second chunk: the first wrote 3)
    assert stack.runner is not None
    sandbox.delete("/requests")
    lines = ["user_id,email,country"] + [f"k{i},killed{i}@example.com,GB" for i in range(USERS)]
    with stack.runner.environment(ACTIVATION_CHUNK_BYTES="100000", ACTIVATION_PART_USERS="6000"):
        link = api.post("/platform-ads/uploads", headers=org.headers).json()
        assert send_upload(link, "\n".join(lines).encode()).status_code == 204
        with killed_at_write(stack, FUNCTION, action_is("select_users"), service="s3", nth=5) as killed:
            # When
            started = api.post(
                "/platform-ads/activations",
                json={"name": "Killed chunk", "uploadId": link["uploadId"]},
                headers=org.headers,
            )
            assert started.status_code == 202, started.text
            done = wait_until(api, org, started.json()["audienceId"], "succeeded", "failed")

    # Then the task was killed there, retried, and every user was uploaded once, in one session
    assert killed, "no fifth write was seen in select_users"
    assert (done["state"], done["status"], done["error"]) == ("succeeded", "active", None), done
    assert done["attempt"] == 1
    assert_everyone_once(sandbox, done, USERS)
