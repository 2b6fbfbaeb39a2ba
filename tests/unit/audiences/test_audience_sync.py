"""The audience sync's steps and schedule: a replace that resumes in its session after throttling,
a disconnection midway, a replace session the platform dropped, and what the scheduler starts.

The platform is the sandbox in process behind a real Graph client; the stores are in-memory fakes of
the service's protocols (the end-to-end runs are in ``tests/integration/test_audience_sync.py``).
"""

from __future__ import annotations

import csv
import io
import threading
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import pytest

from shared.audiences.identifiers import AudienceUser
from shared.audiences.models import CreateAudienceRequest, RefreshAudienceRequest
from shared.audiences.preparation import prepare_audience
from shared.audiences.service import AudienceService
from shared.audiences.sync import AudienceSyncService, SyncPolicy
from shared.errors import Conflict, NotFound
from shared.ml.freshness import FreshnessRules
from shared.platform.audiences import create_custom_audience
from shared.platform.client import GraphClient
from shared.platform.errors import TOKEN_INVALID, build_error
from shared.records.audiences import (
    AudienceRecord,
    AudienceSync,
    HoldoutRecord,
    SegmentProvenance,
    SyncRun,
    ValueSeedRecord,
)
from shared.records.connections import Connection
from shared.records.models import ModelRecord
from shared.targeting.models import SegmentSpec
from shared.targeting.service import SegmentUsers
from tests.unit.audiences.test_audience_service import (
    AD_ACCOUNT_ID,
    ORG,
    START,
    MemoryAudiences,
    MemoryBlobs,
    SandboxConnections,
    Ticking,
    buyers,
)
from tests.unit.sandbox_platform import SandboxPlatform

# How long a test waits for its other thread: a bound on a hang (a bug), not a speed.
BOUND_ON_A_HANG = 60.0


class Segment:
    """``SegmentSource``: the users the current model's segment holds (set by the test)."""

    def __init__(self, users: list[AudienceUser]) -> None:
        self.users = users

    def users_for(
        self, org_id: str, spec: SegmentSpec, *, latest_identifiers: bool = False, values: bool = False
    ) -> SegmentUsers:
        assert latest_identifiers
        provenance = SegmentProvenance(
            model_name=spec.model_name,
            model_version="v2",
            dataset_version="d2",
            product_id=spec.product_id,
            rule=spec.rule,
            value=spec.value,
            users_selected=len(self.users),
            users_without_customer_row=0,
        )
        # A value-based seed's predicted values: 10 x the user's score, as the test can check.
        predicted = {u.user_id: round(10 * (u.score or 0.0), 4) for u in self.users} if values else None
        return SegmentUsers(users=list(self.users), provenance=provenance, values=predicted)


class Models:
    def __init__(self, trained_at: datetime) -> None:
        self.trained_at = trained_at

    def get(self, org_id: str, name: str) -> ModelRecord | None:
        return ModelRecord(
            org_id=org_id,
            name=name,
            type="purchase",
            version="v2",
            trained_at=self.trained_at,
            training_cutoff=self.trained_at,
            training_user_count=100,
            bundle_key="bundle",
            bundle_sha256="0" * 64,
        )


class Connections:
    """``ConnectionReader``: which organizations are connected."""

    def __init__(self) -> None:
        self.connected = {ORG}

    def get(self, org_id: str) -> Connection | None:
        status = "active" if org_id in self.connected else "inactive"
        return Connection(org_id=org_id, status=status, ad_account_id=AD_ACCOUNT_ID)

    def active(self) -> list[Connection]:
        return [Connection(org_id=o, status="active", ad_account_id=AD_ACCOUNT_ID) for o in self.connected]


class Starts:
    def __init__(self) -> None:
        self.started: list[tuple[str, dict[str, str]]] = []

    def __call__(self, name: str, payload: dict[str, str]) -> None:
        self.started.append((name, payload))


@pytest.fixture
def platform() -> SandboxPlatform:
    return SandboxPlatform()


@pytest.fixture
def world(platform: SandboxPlatform) -> dict[str, Any]:
    """A segment audience of users 0-24 on the platform (batches of 10) and a sync service."""
    audiences, blobs, clock = MemoryAudiences(), MemoryBlobs(), Ticking()
    connections = SandboxConnections(platform)
    creator = AudienceService(
        audiences=audiences, blobs=blobs, connections=connections, clock=clock, batch_size=10
    )
    created = creator.create(ORG, CreateAudienceRequest(name="Likely buyers", users=buyers(25)))
    record = audiences.get(ORG, created.audience_id)
    assert record is not None
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
    audiences.put(record)
    starts = Starts()
    service = AudienceSyncService(
        audiences=audiences,
        blobs=blobs,
        connections=connections,
        connection_store=Connections(),
        models=Models(START),
        segments=lambda: Segment(buyers(25, first=100)),
        rules=FreshnessRules,
        start=starts,
        clock=clock,
        policy=SyncPolicy(max_batches_per_step=2, batch_size=10),
    )
    return {
        "service": service,
        "creator": creator,
        "audiences": audiences,
        "connections": connections,
        "starts": starts,
        "audience_id": created.audience_id,
        "platform_id": created.platform_custom_audience_id,
        "clock": clock,
    }


def begin_run(world: dict[str, Any]) -> str:
    """Refresh now: the run is recorded and its execution started."""
    world["service"].sync_now(ORG, world["audience_id"])
    [(_, payload)] = world["starts"].started
    return str(payload["run_id"])


def extern_ids(platform: SandboxPlatform, platform_id: str) -> list[str]:
    members = platform.admin("GET", f"/audiences/{platform_id}/members")["members"]
    return sorted(row[0] for group in members for row in group["rows"])


def test_a_run_replaces_the_members_in_one_session_a_bounded_number_of_batches_per_step(
    world: dict[str, Any], platform: SandboxPlatform
) -> None:
    # Given: a run of 25 new users, batches of 10, at most 2 batches a step
    run_id = begin_run(world)
    platform.forget_calls()
    # When
    first = world["service"].step(ORG, world["audience_id"], run_id)
    second = world["service"].step(ORG, world["audience_id"], run_id)
    # Then: two steps, three batches of one replace session, and exactly the new users on the platform
    assert (first.status, first.batches_done, first.batches_total) == ("replacing", 2, 3)
    assert second.status == "done"
    sessions = platform.upload_sessions(r"/usersreplace$")
    assert [seq for _, seq in sessions] == [1, 2, 3]
    assert len({session for session, _ in sessions}) == 1
    expected = sorted(row[0] for row in prepare_audience(buyers(25, first=100)).rows)
    assert extern_ids(platform, world["platform_id"]) == expected
    record = world["audiences"].get(ORG, world["audience_id"])
    assert record.sync.last_run.outcome == "succeeded"
    assert (record.sync.last_run.previous_size, record.sync.last_run.users_uploaded) == (25, 25)
    assert record.segment.model_version == "v2"


def test_a_sync_never_uploads_the_audiences_holdout(world: dict[str, Any], platform: SandboxPlatform) -> None:
    # Given: the audience kept users u100-u104 out of its upload as its holdout (lift measurement)
    audiences: MemoryAudiences = world["audiences"]
    record = audiences.get(ORG, world["audience_id"])
    groups = "user_id,score,group\n" + "".join(f"u{i},0.9,holdout\n" for i in range(100, 105))
    world["service"].blobs.put("groups.csv", groups.encode(), "text/csv")
    record.holdout = HoldoutRecord(
        percent=20, seed=1, uploaded_users=20, holdout_users=5, groups_key="groups.csv"
    )
    audiences.put(record)
    run_id = begin_run(world)
    # When: the segment (users u100-u124) is synced
    while world["service"].step(ORG, world["audience_id"], run_id).status != "done":
        pass
    # Then: the held-out users are not on the platform; the others are
    expected = sorted(row[0] for row in prepare_audience(buyers(20, first=105)).rows)
    assert extern_ids(platform, world["platform_id"]) == expected
    assert audiences.get(ORG, world["audience_id"]).sync.last_run.users_uploaded == 20
    # And: the CSV snapshot still holds the held-out users, marked in its group column, as the
    # activation's did (the sync wrote the 20 uploaded users without the column: walking make dev,
    # the download of an 800-user segment had 720 rows and no group after Refresh now)
    blobs = world["service"].blobs
    rows = list(csv.reader(io.StringIO(blobs.get(record.snapshot_key).decode("utf-8-sig"))))
    assert rows[0][-1] == "group"
    assert {row[0] for row in rows[1:] if row[-1] == "holdout"} == {f"u{i}" for i in range(100, 105)}
    assert {row[0] for row in rows[1:] if row[-1] == "uploaded"} == {f"u{i}" for i in range(105, 125)}
    # And the run's own files are gone with it
    assert not [key for key in blobs.objects if ".sync." in key]


def test_a_throttled_step_waits_and_the_next_continues_the_same_session(
    world: dict[str, Any], platform: SandboxPlatform
) -> None:
    # Given: a run whose first step sent batches 1 and 2, and then a platform that throttles (longer
    # than the client's retries)
    run_id = begin_run(world)
    service: AudienceSyncService = world["service"]
    platform.forget_calls()
    first = service.step(ORG, world["audience_id"], run_id)
    platform.fault(
        kind="throttle", method="POST", path="/usersreplace$", code=80003, regain_minutes=2, count=6
    )
    # When: the next step meets the throttle, and the one after meets none
    waiting = service.step(ORG, world["audience_id"], run_id)
    platform.admin("DELETE", "/faults")
    done = service.step(ORG, world["audience_id"], run_id)
    # Then: the state machine is told to wait, and the next step finishes the same session
    assert (first.status, first.batches_done) == ("replacing", 2)
    assert (waiting.status, waiting.batches_done) == ("waiting", 2)
    assert waiting.wait_seconds >= 1
    assert done.status == "done"
    sessions = platform.upload_sessions(r"/usersreplace$")
    assert [seq for _, seq in sessions] == [1, 2, 3]
    assert len({session for session, _ in sessions}) == 1
    assert len(extern_ids(platform, world["platform_id"])) == 25


def test_a_disconnection_midway_stops_the_run_and_the_platform_keeps_the_old_members(
    world: dict[str, Any], platform: SandboxPlatform
) -> None:
    # Given: a run that sent two of its three batches
    run_id = begin_run(world)
    old = extern_ids(platform, world["platform_id"])
    world["service"].step(ORG, world["audience_id"], run_id)
    # When: the ad account is disconnected, and the next step comes
    world["connections"].refusal = NotFound("No advertising account is connected.")
    progress = world["service"].step(ORG, world["audience_id"], run_id)
    # Then: the run is stopped with the reason; it is due again at once (as soon as reconnected)
    assert progress.status == "done"
    record = world["audiences"].get(ORG, world["audience_id"])
    assert record.sync.current is None
    assert record.sync.last_run.outcome == "stopped"
    assert record.sync.last_run.failure.code == "platform_disconnected"
    assert "Reconnect" in record.sync.last_run.failure.remedy
    assert record.sync.next_sync_at <= world["clock"].now
    # and the platform kept the old members (a replace changes nothing before its last batch)
    assert extern_ids(platform, world["platform_id"]) == old


def test_a_token_the_platform_no_longer_accepts_fails_the_run_with_the_remedy(world: dict[str, Any]) -> None:
    # Given: a run, and a token revoked on the platform
    run_id = begin_run(world)
    world["connections"].refusal = build_error(TOKEN_INVALID)
    # When
    progress = world["service"].step(ORG, world["audience_id"], run_id)
    # Then: the run failed with the platform error's code and remedy (the state machine has nothing
    # to catch, so nothing is lost on the way)
    assert progress.status == "done"
    failure = world["audiences"].get(ORG, world["audience_id"]).sync.last_run.failure
    assert failure.code == "platform_reconnect_required"
    assert failure.remedy


def test_a_replace_session_the_platform_dropped_starts_again_from_batch_1(
    world: dict[str, Any], platform: SandboxPlatform
) -> None:
    # Given: a run that sent two batches, then stalled past the platform's 90-minute replace window
    run_id = begin_run(world)
    service: AudienceSyncService = world["service"]
    service.step(ORG, world["audience_id"], run_id)
    platform.admin("POST", "/clock", {"seconds": 91 * 60})
    world["clock"].now += timedelta(minutes=91)
    platform.forget_calls()
    # When
    while service.step(ORG, world["audience_id"], run_id).status != "done":
        pass
    # Then: a new session from batch 1 carried every new user
    sessions = platform.upload_sessions(r"/usersreplace$")
    assert [seq for _, seq in sessions] == [1, 2, 3]
    assert len(extern_ids(platform, world["platform_id"])) == 25
    assert world["audiences"].get(ORG, world["audience_id"]).sync.last_run.outcome == "succeeded"


def test_a_superseded_run_does_nothing(world: dict[str, Any], platform: SandboxPlatform) -> None:
    # Given: a run, and an execution of an older run that comes back late
    begin_run(world)
    platform.forget_calls()
    # When
    progress = world["service"].step(ORG, world["audience_id"], "now-19990101T000000")
    # Then
    assert progress.status == "done"
    assert platform.calls("/usersreplace$") == []


class LateScoring(Segment):
    """The first scoring (an older run's step) is slow: while it runs, that run is given up for lost
    and a newer run starts and takes its first step (which scores the newer members)."""

    def __init__(self, world: dict[str, Any]) -> None:
        super().__init__(buyers(25, first=100))
        self.world = world
        self.meanwhile: list[str] = []

    def users_for(
        self, org_id: str, spec: SegmentSpec, *, latest_identifiers: bool = False, values: bool = False
    ) -> SegmentUsers:
        if not self.meanwhile:
            older = list(self.users)
            self.users = buyers(25, first=200)
            self.world["clock"].now += timedelta(hours=2)  # past a replace session: the run is lost
            self.world["starts"].started.clear()
            self.meanwhile.append(begin_run(self.world))
            progress = self.world["service"].step(ORG, self.world["audience_id"], self.meanwhile[0])
            assert progress.status == "replacing"
            return SegmentUsers(
                users=older, provenance=super().users_for(org_id, spec, latest_identifiers=True).provenance
            )
        return super().users_for(org_id, spec, latest_identifiers=latest_identifiers, values=values)


def test_an_older_runs_late_step_leaves_the_newer_runs_members_alone(
    world: dict[str, Any], platform: SandboxPlatform
) -> None:
    # Given: a run whose first step scores its members slowly, and a newer run started meanwhile,
    # which stored its members (users u200-u224) and sent its first batches
    older = begin_run(world)
    scoring = LateScoring(world)
    world["service"].segments = lambda: scoring

    # When: the older run's step stores its members (users u100-u124) after all, then the newer run
    # goes on to its end
    assert world["service"].step(ORG, world["audience_id"], older).status == "done"
    [newer] = scoring.meanwhile
    while world["service"].step(ORG, world["audience_id"], newer).status != "done":
        pass

    # Then: the platform holds the newer run's members, and no run's members file is left behind
    expected = sorted(row[0] for row in prepare_audience(buyers(25, first=200)).rows)
    assert extern_ids(platform, world["platform_id"]) == expected
    record = world["audiences"].get(ORG, world["audience_id"])
    assert record.sync.last_run.run_id == newer
    assert record.sync.last_run.outcome == "succeeded"
    blobs: MemoryBlobs = world["service"].blobs
    assert [key for key in blobs.objects if ".sync" in key] == []


def audience_files(world: dict[str, Any]) -> list[str]:
    """The keys of every file stored for the world's audience (its snapshot, its runs' members)."""
    blobs: MemoryBlobs = world["service"].blobs
    return sorted(key for key in blobs.objects if world["audience_id"] in key)


def test_deleting_an_audience_midway_through_a_sync_deletes_the_runs_members_too(
    world: dict[str, Any],
) -> None:
    # Given: a run that stored its members (users u100-u124) and sent two of its three batches
    run_id = begin_run(world)
    assert world["service"].step(ORG, world["audience_id"], run_id).status == "replacing"
    assert any(".sync." in key for key in audience_files(world))

    # When: the audience is deleted, and the run's next step comes
    world["creator"].delete(ORG, world["audience_id"], confirm=True)
    progress = world["service"].step(ORG, world["audience_id"], run_id)

    # Then: no file of the audience is left, its members' list included
    assert progress.status == "done"
    assert audience_files(world) == []


def test_a_runs_first_step_that_falls_inside_the_delete_leaves_no_members_file(
    world: dict[str, Any],
) -> None:
    # Given: a run whose first step (scoring, storing the members, sending two batches) runs whole
    # after the delete read the audience (when the run had stored nothing) and before it removes it
    run_id = begin_run(world)
    creator: AudienceService = world["creator"]
    connections: SandboxConnections = world["connections"]
    first_steps: list[str] = []

    class FirstStepMeanwhile:
        def client_for(self, org_id: str) -> tuple[Connection, GraphClient]:
            if not first_steps:
                first_steps.append(world["service"].step(ORG, world["audience_id"], run_id).status)
            return connections.client_for(org_id)

        def record_usage(self, org_id: str, graph: GraphClient) -> None:
            connections.record_usage(org_id, graph)

    creator.connections = FirstStepMeanwhile()

    # When: the audience is deleted, and the run's next step comes
    creator.delete(ORG, world["audience_id"], confirm=True)
    progress = world["service"].step(ORG, world["audience_id"], run_id)

    # Then: the first step stored the members and went on; the next found the audience gone, and no
    # file of the audience is left, the run's members included
    assert first_steps == ["replacing"]
    assert progress.status == "done"
    assert world["audiences"].get(ORG, world["audience_id"]) is None
    assert audience_files(world) == []


def _last_batch_sent(record: AudienceRecord, run_id: str) -> bool:
    """The run's progress is saved with the platform's acknowledgement of its last batch."""
    run = record.sync.current if record.sync else None
    return bool(run and run.replace and run.replace.batches_done == run.replace.batches_total)


def _closed(record: AudienceRecord, run_id: str) -> bool:
    """The run is recorded as the audience's result (its snapshot is not written yet)."""
    return bool(record.sync and record.sync.last_run and record.sync.last_run.run_id == run_id)


@pytest.mark.parametrize("deleted_once", [_last_batch_sent, _closed], ids=["last batch sent", "run closed"])
def test_a_run_whose_audience_is_deleted_as_it_ends_leaves_no_snapshot(
    world: dict[str, Any], deleted_once: Callable[[AudienceRecord, str], bool]
) -> None:
    # Given: a run whose audience is deleted just after the platform took its last batch (before the
    # run's close), or just after the run's close is recorded (before it writes the CSV snapshot)
    run_id = begin_run(world)
    audiences: MemoryAudiences = world["audiences"]

    def delete_at_that_moment(record: AudienceRecord) -> None:
        if deleted_once(record, run_id):
            audiences.after_put = lambda record: None
            world["creator"].delete(ORG, world["audience_id"], confirm=True)

    audiences.after_put = delete_at_that_moment

    # When: the run steps to its end
    while world["service"].step(ORG, world["audience_id"], run_id).status != "done":
        pass

    # Then: the deleted audience's customer list is not left behind: not written again by a run whose
    # close found it gone, and deleted again by a run that wrote it after the delete
    assert audiences.get(ORG, world["audience_id"]) is None
    assert audience_files(world) == []


def test_a_run_that_closes_and_writes_its_snapshot_while_the_audience_is_deleted_leaves_no_snapshot(
    world: dict[str, Any],
) -> None:
    # Given: a run whose last step has sent its last batch when the audience is deleted, and goes on
    # (closes the run, writes the snapshot, reads the audience) once the delete has removed the
    # snapshot, before the delete removes the audience's record
    run_id = begin_run(world)
    audiences: MemoryAudiences = world["audiences"]
    blobs: MemoryBlobs = world["service"].blobs
    record = audiences.get(ORG, world["audience_id"])
    assert record is not None
    assert record.snapshot_key is not None
    last_batch_sent, snapshot_deleted = threading.Event(), threading.Event()

    def pause_after_the_last_batch(stored: AudienceRecord) -> None:
        run = stored.sync.current if stored.sync else None
        if run and run.replace and run.replace.batches_done == run.replace.batches_total:
            audiences.after_put = lambda stored: None
            last_batch_sent.set()
            snapshot_deleted.wait(BOUND_ON_A_HANG)

    audiences.after_put = pause_after_the_last_batch
    outcome: list[tuple[str, bool]] = []

    def run_to_its_end() -> None:
        while (status := world["service"].step(ORG, world["audience_id"], run_id).status) != "done":
            pass
        outcome.append((status, blobs.exists(record.snapshot_key)))

    steps = threading.Thread(target=run_to_its_end)
    steps.start()
    assert last_batch_sent.wait(BOUND_ON_A_HANG)
    delete = blobs.delete

    def then_the_run_goes_on(key: str) -> None:
        delete(key)
        if key == record.snapshot_key and not snapshot_deleted.is_set():
            snapshot_deleted.set()
            steps.join(BOUND_ON_A_HANG)

    blobs.delete = then_the_run_goes_on  # type: ignore[method-assign]

    # When: the audience is deleted
    world["creator"].delete(ORG, world["audience_id"], confirm=True)

    # Then: the run ended and had written the snapshot again, and no file of the audience is left
    assert outcome == [("done", True)]
    assert audiences.get(ORG, world["audience_id"]) is None
    assert audience_files(world) == []


def test_the_scheduler_starts_due_runs_of_connected_organizations_only(world: dict[str, Any]) -> None:
    # Given: the audience is due
    audiences: MemoryAudiences = world["audiences"]
    record = audiences.get(ORG, world["audience_id"])
    record.sync = AudienceSync(next_sync_at=START)
    audiences.put(record)
    service: AudienceSyncService = world["service"]
    # When: the organization is disconnected, the scheduler starts nothing
    service.connection_store.connected = set()  # type: ignore[attr-defined]
    assert service.start_due().started == 0
    # When: connected again, it starts one run, and a second tick leaves the running one alone
    service.connection_store.connected = {ORG}  # type: ignore[attr-defined]
    assert service.start_due().started == 1
    assert service.start_due().started == 0
    [(name, payload)] = world["starts"].started
    assert name == f"{world['audience_id']}-{payload['run_id']}"
    assert audiences.get(ORG, world["audience_id"]).sync.current.trigger == "schedule"


def test_a_run_lost_for_longer_than_a_replace_session_is_closed_and_started_again(
    world: dict[str, Any],
) -> None:
    # Given: a due audience whose recorded run started long ago and never finished (a lost execution)
    audiences: MemoryAudiences = world["audiences"]
    record = audiences.get(ORG, world["audience_id"])
    lost = SyncRun(run_id="schedule-lost", trigger="schedule", started_at=START - timedelta(hours=3))
    record.sync = AudienceSync(next_sync_at=START, current=lost)
    audiences.put(record)
    # When
    summary = world["service"].start_due()
    # Then
    assert summary.started == 1
    record = audiences.get(ORG, world["audience_id"])
    assert record.sync.last_run.run_id == "schedule-lost"
    assert record.sync.last_run.failure.code == "sync_lost"
    assert record.sync.current.run_id != "schedule-lost"


def test_a_value_based_seed_is_synced_with_every_members_new_predicted_value(
    world: dict[str, Any], platform: SandboxPlatform
) -> None:
    # Given: the audience is a value-based seed on the platform (issue 15, item 3), and the segment's
    # 25 new users have scores (their predicted value here: 10 x the score)
    audiences: MemoryAudiences = world["audiences"]
    record = audiences.get(ORG, world["audience_id"])
    graph = platform.graph(platform.user_token())
    seed = create_custom_audience(graph, AD_ACCOUNT_ID, "Seed", "Predicted buyers", value_based=True)
    record.platform_custom_audience_id = seed.id
    record.value_seed = ValueSeedRecord(source="predicted_spend")
    audiences.put(record)
    scored = [
        user.model_copy(update={"score": (i + 1) / 100}) for i, user in enumerate(buyers(25, first=100))
    ]
    world["service"].segments = lambda: Segment(scored)
    run_id = begin_run(world)
    # When: it is synced over several steps (2 batches a step: the last step reads the stored values)
    steps = 1
    while world["service"].step(ORG, world["audience_id"], run_id).status != "done":
        steps += 1
    # Then: every member on the platform carries its new value
    assert steps == 2
    held = platform.admin("GET", f"/audiences/{seed.id}/members")
    assert held["is_value_based"] is True
    values = {
        row[0]: value
        for group in held["members"]
        for row, value in zip(group["rows"], group["values"], strict=True)
    }
    assert values == {user.user_id: round(10 * (user.score or 0.0), 4) for user in scored}


# --- a refresh with users and a sync never replace the members at once ------------------------------


class DuringRefresh(SandboxConnections):
    """The organization's connection, which runs ``meanwhile`` once when the refresh asks for its
    client: after the refresh's own check for a running sync, before its replace session."""

    def __init__(self, platform: SandboxPlatform, meanwhile: Callable[[], None]) -> None:
        super().__init__(platform)
        self.meanwhile: Callable[[], None] | None = meanwhile

    def client_for(self, org_id: str) -> tuple[Connection, GraphClient]:
        meanwhile, self.meanwhile = self.meanwhile, None
        if meanwhile is not None:
            meanwhile()
        return super().client_for(org_id)


def test_no_sync_starts_while_a_refresh_with_users_replaces_the_members(
    world: dict[str, Any], platform: SandboxPlatform
) -> None:
    # Given: a due segment audience of 25
    audiences: MemoryAudiences = world["audiences"]
    record = audiences.get(ORG, world["audience_id"])
    record.sync = AudienceSync(next_sync_at=START)
    audiences.put(record)
    service: AudienceSyncService = world["service"]
    refused: list[Exception] = []
    started: list[int] = []

    def sync_meanwhile() -> None:
        # Refresh now, and a tick of the schedule, during the refresh (both started before the change)
        try:
            service.sync_now(ORG, world["audience_id"])
        except Conflict as conflict:
            refused.append(conflict)
        started.append(service.start_due().started)

    creator: AudienceService = world["creator"]
    creator.connections = DuringRefresh(platform, sync_meanwhile)

    # When: a list of 3 replaces the members
    refreshed = creator.refresh(ORG, world["audience_id"], RefreshAudienceRequest(users=buyers(3, first=500)))

    # Then: neither started a sync (two replace sessions at once), refresh now was told why, and the
    # list is on the platform; the claim is gone, so a sync starts now
    [conflict] = refused
    assert conflict.message.startswith("A refresh of this audience with a list of users is replacing")
    assert conflict.remedy
    assert started == [0]
    assert world["starts"].started == []
    assert refreshed.user_count == 3
    assert platform.member_count(world["platform_id"]) == 3
    assert audiences.get(ORG, world["audience_id"]).refresh_started_at is None
    assert service.start_due().started == 1


def test_a_refresh_whose_claim_meets_a_sync_started_meanwhile_is_refused_and_sends_nothing(
    world: dict[str, Any], platform: SandboxPlatform
) -> None:
    # Given: a sync (refresh now) starts between the refresh's check and its claim
    audiences: MemoryAudiences = world["audiences"]
    service: AudienceSyncService = world["service"]
    once = [True]

    def sync_first(record: AudienceRecord) -> None:
        if once[0] and record.refresh_started_at is not None:
            once[0] = False
            service.sync_now(ORG, world["audience_id"])

    audiences.before_put = sync_first
    sessions_before = len(platform.upload_sessions(r"/usersreplace$"))

    # When / Then: the refresh is refused naming the run, and sends nothing
    with pytest.raises(Conflict, match="A sync of this audience is already running"):
        world["creator"].refresh(
            ORG, world["audience_id"], RefreshAudienceRequest(users=buyers(3, first=500))
        )
    assert len(platform.upload_sessions(r"/usersreplace$")) == sessions_before
    assert platform.member_count(world["platform_id"]) == 25
    stored = audiences.get(ORG, world["audience_id"])
    assert stored.refresh_started_at is None
    assert stored.sync.current is not None


def test_a_failed_refresh_takes_its_claim_back(world: dict[str, Any], platform: SandboxPlatform) -> None:
    # Given: the platform refuses the refresh's client (the token no longer works)
    creator: AudienceService = world["creator"]
    connections = SandboxConnections(platform)
    connections.refusal = build_error(TOKEN_INVALID)
    creator.connections = connections
    # When
    with pytest.raises(Exception):  # noqa: B017, PT011 - whatever the platform's refusal maps to
        creator.refresh(ORG, world["audience_id"], RefreshAudienceRequest(users=buyers(3, first=500)))
    # Then: a sync may start at once
    assert world["audiences"].get(ORG, world["audience_id"]).refresh_started_at is None
    world["service"].sync_now(ORG, world["audience_id"])
