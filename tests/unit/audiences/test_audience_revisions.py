"""Nothing lost on retry or failure (issue 25): writers of one audience record meet, none overwrites
another. The record carries a revision every write moves; a whole-record write is made only over the
revision read, and on a conflict the writer applies its own change again to the record as stored
(or answers 409 when that is not safe).

The store is DynamoAudienceStore on moto's DynamoDB; the other writer runs at the moment a writer is
about to write (``Interleaved.before_put``), the way two Lambda invocations interleave. The sync's
other collaborators are ``test_audience_sync``'s (the sandbox platform in process).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from shared.audiences.models import AudienceSyncRequest, CreateAudienceRequest
from shared.audiences.service import AudienceService
from shared.audiences.sync import AudienceSyncService, SyncPolicy
from shared.errors import Conflict
from shared.ml.freshness import FreshnessRules
from shared.records.audiences import AudienceRecord, SegmentProvenance
from shared.repositories.audiences import DynamoAudienceStore
from tests.unit.audiences.test_audience_service import (
    ORG,
    START,
    MemoryBlobs,
    SandboxConnections,
    Ticking,
    buyers,
)
from tests.unit.audiences.test_audience_sync import Connections, Models, Segment, Starts
from tests.unit.moto_aws import offline_aws, table
from tests.unit.sandbox_platform import SandboxPlatform


class Interleaved(DynamoAudienceStore):
    """The service's store, calling ``before_put`` once, with the record, when a whole-record write
    is about to be sent: the other writer's moment."""

    before_put: Callable[[AudienceRecord], None] | None = None

    def put(self, record: AudienceRecord, apply: Callable[[AudienceRecord], None] | None = None) -> None:
        other, self.before_put = self.before_put, None
        if other is not None:
            other(record)
        super().put(record, apply)


class World:
    """A segment audience of 25 users on the sandbox platform, its sync service and its store."""

    def __init__(self) -> None:
        self.platform = SandboxPlatform()
        self.audiences = Interleaved(table())
        self.clock = Ticking()
        connections = SandboxConnections(self.platform)
        creator = AudienceService(
            audiences=self.audiences,
            blobs=MemoryBlobs(),
            connections=connections,
            clock=self.clock,
            batch_size=10,
        )
        self.audience_id = creator.create(
            ORG, CreateAudienceRequest(name="Likely buyers", users=buyers(25))
        ).audience_id
        record = self.record()
        record.segment = SegmentProvenance(
            model_name="shop-purchase",
            model_version="v1",
            dataset_version="d1",
            product_id="p1",
            rule="top_n",
            value=25,
            users_selected=25,
            users_without_customer_row=0,
        )
        self.audiences.put(record)
        self.starts = Starts()
        self.sync = AudienceSyncService(
            audiences=self.audiences,
            blobs=creator.blobs,
            connections=connections,
            connection_store=Connections(),
            models=Models(START),
            segments=lambda: Segment(buyers(25, first=100)),
            rules=FreshnessRules,
            start=self.starts,
            clock=self.clock,
            policy=SyncPolicy(max_batches_per_step=2, batch_size=10),
        )

    def record(self) -> AudienceRecord:
        record = self.audiences.get(ORG, self.audience_id)
        assert record is not None
        return record

    def run_to_the_end(self, run_id: str) -> None:
        for _ in range(10):
            if self.sync.step(ORG, self.audience_id, run_id).status == "done":
                return
        raise AssertionError("the sync never finished")


@pytest.fixture
def world(monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    with offline_aws(monkeypatch):
        yield World()


def started_run(world: World) -> str:
    world.sync.sync_now(ORG, world.audience_id)
    [(_, payload)] = world.starts.started
    return str(payload["run_id"])


def test_a_schedule_change_made_while_a_sync_step_runs_is_kept_when_the_sync_finishes(world: World) -> None:
    # Given a sync running, and the user changing its schedule to weekly (stale models allowed) just
    # before the step writes its progress
    run_id = started_run(world)

    def configure(_: AudienceRecord) -> None:
        world.sync.configure(
            ORG, world.audience_id, AudienceSyncRequest(frequency="weekly", allow_stale_model=True)
        )

    world.audiences.before_put = configure
    # When the sync runs to its end
    world.run_to_the_end(run_id)
    # Then the run succeeded, and the schedule is the user's: weekly from the run's start
    record = world.record()
    assert record.sync is not None
    assert record.sync.last_run is not None
    assert record.sync.last_run.outcome == "succeeded"
    assert (record.sync.frequency, record.sync.allow_stale_model) == ("weekly", True)
    assert record.sync.next_sync_at is not None
    assert (record.sync.next_sync_at - record.sync.last_run.started_at).days == 7
    assert record.user_count == 25
    assert record.segment is not None
    assert record.segment.model_version == "v2"


def test_two_simultaneous_sync_now_start_one_run_and_the_other_is_told_what_runs(world: World) -> None:
    # Given a second "sync now" arriving while the first is about to record its run
    second: dict[str, Any] = {}

    def sync_now_again(_: AudienceRecord) -> None:
        second["view"] = world.sync.sync_now(ORG, world.audience_id)

    world.audiences.before_put = sync_now_again
    # When the first one writes
    with pytest.raises(Conflict) as refused:
        world.sync.sync_now(ORG, world.audience_id)
    # Then one run started (the second's), and the first was told it is already running, and which
    [(_, payload)] = world.starts.started
    assert refused.value.status == 409
    assert "already running" in refused.value.message
    assert payload["run_id"] in refused.value.message
    record = world.record()
    assert record.sync is not None
    assert record.sync.current is not None
    assert record.sync.current.run_id == payload["run_id"]


def test_a_sync_now_while_a_sync_runs_answers_409_naming_it(world: World) -> None:
    # Given a run started
    run_id = started_run(world)
    # When sync now is asked again
    with pytest.raises(Conflict) as refused:
        world.sync.sync_now(ORG, world.audience_id)
    # Then 409, naming the run; nothing else started
    assert refused.value.status == 409
    assert run_id in refused.value.message
    assert len(world.starts.started) == 1


def test_an_audience_deleted_while_its_sync_runs_stays_deleted(world: World) -> None:
    # Given a sync running, and the audience deleted just before the step writes
    run_id = started_run(world)
    world.audiences.before_put = lambda record: world.audiences.delete(record)
    # When the step runs
    progress = world.sync.step(ORG, world.audience_id, run_id)
    # Then the step stops, and the record is not written back
    assert progress.status == "done"
    assert world.audiences.get(ORG, world.audience_id) is None


def test_a_write_in_the_same_second_is_seen_by_the_drift_checks_conditional_write(world: World) -> None:
    # Given two readers of the record in the same second (updated_at cannot tell them apart)
    first, second = world.record(), world.record()
    second.name = "Renamed by the other writer"
    world.audiences.put(second)
    # When the first writes over what it read
    first.platform_changes = []
    written = world.audiences.save_unchanged(first)
    # Then it is refused, and the other writer's change stands
    assert written is False
    assert world.record().name == "Renamed by the other writer"


def test_a_record_stored_before_revisions_counts_as_revision_0(world: World) -> None:
    # Given a record stored without a revision (before this change)
    world.audiences._table.update_item(
        Key={"pk": f"ORG#{ORG}", "sk": f"AUDIENCE#{world.audience_id}"},
        UpdateExpression="REMOVE revision",
    )
    first, second = world.record(), world.record()
    assert first.revision == 0
    # When one writer writes it, then another that read it before
    first.name = "First"
    world.audiences.put(first)
    second.name = "Second"
    # Then the first is revision 1, and the second is refused (409), not written over it
    with pytest.raises(Conflict):
        world.audiences.put(second)
    assert (world.record().name, world.record().revision) == ("First", 1)
