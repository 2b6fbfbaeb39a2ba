"""Stranded uploads (issue 12, item 3): a synchronous create without an Idempotency-Key whose worker
dies mid-upload is resumed by the scheduled sweeper to the end, nobody lost or sent twice, or failed
with the reason and the remedy.

The kill is real as far as the record and the platform are concerned: the service runs against moto
and the sandbox, and its process "dies" (an exception no code path catches) right after the record
says batch 1 of 3 was acknowledged, an hour and a half ago.
"""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from local.connected import ConnectedOrg
from local.stack import LocalStack
from shared import wiring
from shared.audiences.models import CreateAudienceRequest
from shared.audiences.service import AudienceStore
from shared.records.audiences import AudienceRecord
from tests.integration.test_activation import wait_for
from tests.integration.test_audiences import body, members

SCHEDULED_EVENT = {"source": "aws.scheduler", "detail-type": "Scheduled Event", "detail": {}}


class WorkerKilled(BaseException):
    """The worker's process ending (a Lambda timeout): nothing in the service catches it."""


@dataclasses.dataclass
class DiesAfterBatch:
    """The audience store, through which the worker dies right after recording batch ``batch``."""

    store: AudienceStore
    batch: int

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    def put(self, record: AudienceRecord) -> None:
        self.store.put(record)
        self._die_after(record)

    def save_leased(self, record: AudienceRecord, owner: str) -> bool:
        saved: bool = self.store.save_leased(record, owner)  # type: ignore[attr-defined]
        self._die_after(record)
        return saved

    def _die_after(self, record: AudienceRecord) -> None:
        if record.upload is not None and record.upload.batches_done == self.batch:
            raise WorkerKilled


def killed_create(org: ConnectedOrg, count: int, *, ago: timedelta) -> AudienceRecord:
    """A synchronous create of ``count`` users (no Idempotency-Key) whose worker died after batch 1,
    ``ago`` before now."""
    started = datetime.now(UTC) - ago
    service = dataclasses.replace(
        wiring.audience_service(), audiences=DiesAfterBatch(wiring.audience_store(), 1), clock=lambda: started
    )
    with pytest.raises(WorkerKilled):
        service.create(org.org_id, CreateAudienceRequest.model_validate(body(count)))
    [record] = [r for r in wiring.audience_store().list_for_org(org.org_id) if r.status == "uploading"]
    assert record.upload is not None
    assert record.upload.batches_done == 1
    return record


def sweep(stack: LocalStack) -> dict[str, int]:
    assert stack.gateway is not None
    result: dict[str, int] = stack.gateway.invoke("SweepStrandedUploadsFunction", SCHEDULED_EVENT)
    return result


def upload_calls(sandbox: httpx.Client, platform_id: str) -> list[dict[str, Any]]:
    calls = sandbox.get("/requests", params={"path": f"{platform_id}/users$", "method": "POST"}).json()
    sessions = [call["params"]["session"] for call in calls["requests"] if call["status"] == 200]
    return [json.loads(s) if isinstance(s, str) else s for s in sessions]


def test_a_create_killed_mid_upload_is_resumed_to_the_end_with_nobody_lost_or_sent_twice(
    stack: LocalStack, org: ConnectedOrg, sandbox: httpx.Client
) -> None:
    # Given: a synchronous create of 25,000 users (3 batches) whose worker died 90 minutes ago after
    # the platform acknowledged batch 1
    record = killed_create(org, 25_000, ago=timedelta(minutes=90))
    assert record.platform_custom_audience_id is not None
    assert len(members(sandbox, record.platform_custom_audience_id)) == 10_000

    # When: the scheduled sweeper runs
    summary = sweep(stack)

    # Then: it resumed the audience through the activation state machine, which finished it
    assert summary["resumed"] >= 1
    active = wait_for(stack, org, record.audience_id, "active")
    assert active["userCount"] == 25_000
    # Every user is on the platform, and every batch was sent once, in the one upload session
    received = members(sandbox, record.platform_custom_audience_id)
    assert sorted(row[0] for row in received) == sorted(f"u{i}" for i in range(25_000))
    sessions = upload_calls(sandbox, record.platform_custom_audience_id)
    assert sorted(s["batch_seq"] for s in sessions) == [1, 2, 3]
    assert {s["session_id"] for s in sessions} == {record.upload.session_id if record.upload else None}
    # And the record says what happened
    resumed = wiring.audience_store().get(org.org_id, record.audience_id)
    assert resumed is not None
    assert resumed.recovery is not None
    assert resumed.recovery.attempts == 1
    assert "stopped after batch 1 of 3" in resumed.recovery.reason


def test_a_stranded_create_of_a_disconnected_account_fails_with_the_reason_and_remedy(
    stack: LocalStack, api: httpx.Client, org: ConnectedOrg, sandbox: httpx.Client
) -> None:
    # Given: a create killed after batch 1 of 3, and the ad account disconnected since
    record = killed_create(org, 25_000, ago=timedelta(minutes=90))
    assert api.post("/platform-ads/disconnect", headers=org.headers).status_code == 200
    assert record.platform_custom_audience_id is not None

    # When
    sweep(stack)

    # Then: the audience is failed with why it stopped and what to do; nothing more was uploaded
    [shown] = [
        a
        for a in api.get("/platform-ads/audiences", headers=org.headers).json()["audiences"]
        if a["audienceId"] == record.audience_id
    ]
    assert shown["status"] == "failed"
    assert shown["failure"]["code"] == "upload_stranded"
    assert "stopped after batch 1 of 3" in shown["failure"]["message"]
    assert "disconnected" in shown["failure"]["message"]
    assert shown["failure"]["remedy"].startswith("Reconnect the ad account, then create the audience again")
    assert [s["batch_seq"] for s in upload_calls(sandbox, record.platform_custom_audience_id)] == [1]


def test_an_upload_that_moved_recently_is_left_alone(stack: LocalStack, org: ConnectedOrg) -> None:
    # Given: a create whose worker stopped a minute ago (it may still be running)
    record = killed_create(org, 25_000, ago=timedelta(minutes=1))

    # When
    sweep(stack)

    # Then
    kept = wiring.audience_store().get(org.org_id, record.audience_id)
    assert kept is not None
    assert kept.status == "uploading"
    assert kept.recovery is None
