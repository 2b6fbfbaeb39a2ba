"""A task that dies mid-way in the scheduled audience sync and the data source's sync (issue 25, item
6). The audience sync: a segment audience's
sync step is killed (the process dies: no ``except`` or saving code runs) at its first write to AWS,
and again once the platform took the replace's last batch but before its answer reached the step. The
state machine retries the step (``Runtime.ExitError``), which resumes from what it committed: the run
succeeds, the platform holds the segment's members once, and each run used one replace session. The
data source's sync: its step is killed at the first object of the dataset version, once the version
is published (before its answer), and once the sync is recorded; retried, the sync ends synced with
exactly one version, in force, every object it names written.

The kill is the local runner's test hook, as in ``test_killed_steps.py`` (activation): ``task_kills.py``."""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

import httpx
import pytest

from local.connected import ConnectedOrg
from local.stack import LocalStack
from shared import wiring
from tests.integration.task_kills import action_is, killed_after_answer, killed_at_write
from tests.integration.test_audience_sync import (
    expected_ids,
    member_ids,
    segment_audience,
    wait_for_last_run,
)
from tests.integration.test_data_source import shop_files, upload_shop, wait_for_sync
from tests.integration.test_wizard import synced_and_trained

pytestmark = pytest.mark.integration

FUNCTION = "AudienceSyncStepFunction"


def refresh_now(api: httpx.Client, org: ConnectedOrg, audience_id: str, after: str | None) -> dict[str, Any]:
    started = api.post(f"/platform-ads/audiences/{audience_id}/refresh", headers=org.headers)
    assert started.status_code == 202, started.text
    return wait_for_last_run(api, org, audience_id, after=after)


def replace_sessions(sandbox: httpx.Client) -> set[str]:
    """The session ids of the replace batches the platform accepted since the log was cleared."""
    calls = sandbox.get("/requests", params={"path": "/usersreplace$", "method": "POST"}).json()["requests"]
    sessions = set()
    for call in calls:
        if call["status"] == 200:
            session = call["params"]["session"]
            sessions.add(str((json.loads(session) if isinstance(session, str) else session)["session_id"]))
    return sessions


def test_a_sync_step_killed_at_its_first_write_or_after_its_last_batch_is_retried_and_ends_whole(
    stack: LocalStack, api: httpx.Client, org: ConnectedOrg, sandbox: httpx.Client
) -> None:
    # Given: a segment audience
    synced_and_trained(api, org)
    audience = segment_audience(api, org)
    audience_id, platform_id = audience["audienceId"], audience["platformCustomAudienceId"]
    last: str | None = None
    step = action_is("step")
    kills: dict[str, Callable[[], AbstractContextManager[list[str]]]] = {
        # storing the scored members
        "at its first write": lambda: killed_at_write(stack, FUNCTION, step),
        # the platform's replace session is finished, the step never saved that it was
        "after the last batch": lambda: killed_after_answer(stack, FUNCTION, step, "/usersreplace"),
    }
    for where, kill in kills.items():
        sandbox.delete("/requests")
        # When: refresh now, its step dying at that point
        with kill() as killed:
            synced = refresh_now(api, org, audience_id, after=last)
        # Then: the step was killed there, retried by the state machine, and the run succeeded with the
        # segment's members on the platform once, sent in one replace session
        assert killed, f"{where}: the step was not killed"
        run = synced["sync"]["lastRun"]
        assert run["outcome"] == "succeeded", (where, run)
        after = member_ids(sandbox, platform_id)
        assert after == expected_ids(org, audience_id)
        assert len(set(after)) == len(after)
        assert len(replace_sessions(sandbox)) == 1, where
        assert run["usersUploaded"] == len(after) == synced["userCount"]
        last = run["runId"]


# --- The data source's sync ------------------------------------------------------------------------

SYNC_FUNCTION = "DataSourceSyncJobFunction"


@pytest.mark.parametrize(
    ("service", "nth", "where"),
    [
        ("s3", 1, "the first object of the version written"),
        # The local AWS carries out the write it received: the version is stored and the step dies
        # before it records the sync, so the retry meets its own version (it failed before, refused by
        # the store's condition).
        ("dynamodb", 1, "the version stored, before its answer"),
        # The sync's outcome is recorded and the step dies: the retry finds it and returns it.
        ("dynamodb", 2, "the sync recorded, before its answer"),
    ],
    ids=["first_object", "stored", "recorded"],
)
def test_a_data_source_sync_killed_mid_way_is_retried_and_stores_one_whole_version(
    stack: LocalStack, api: httpx.Client, org: ConnectedOrg, service: str, nth: int, where: str
) -> None:
    # Given: the shop's files uploaded
    upload_id = upload_shop(api, org, shop_files(n_users=300, seed=9))
    # When: the sync runs and its step dies at that point
    with killed_at_write(stack, SYNC_FUNCTION, action_is("sync"), service=service, nth=nth) as killed:
        started = api.post(
            "/platform-ads/data-source/sync", json={"uploadId": upload_id}, headers=org.headers
        )
        assert started.status_code == 202, started.text
        source = wait_for_sync(api, org, started.json()["syncId"], trained=False)
    # Then: the step was killed there, retried, and the sync is synced with one version (in force once
    # its purchase model is trained), every object it names written
    assert killed, f"the step was not killed at {where}"
    [sync] = [s for s in source["syncs"] if s["syncId"] == started.json()["syncId"]]
    assert sync["state"] == "synced", sync
    versions = wiring.dataset_store().list_versions(org.org_id)
    assert [v.version for v in versions] == [sync["datasetVersion"]]
    assert [v["version"] for v in source["versions"]] == [sync["datasetVersion"]]
    blobs = wiring.data_blobs()
    assert versions[0].keys
    assert all(blobs.exists(key) for key in versions[0].keys.values())
