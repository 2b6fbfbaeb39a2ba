"""The closure service's bookkeeping, with in-memory stores: a step cut short anywhere is resumed from
the saved record, asking again does not start a second deletion, and the finished record names no
organization (issue 9, item 12). The deletions themselves run against moto and the sandbox in
``tests/integration/test_account_closure.py``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import pytest

from shared.closure.service import (
    STALLED_AFTER,
    CloseAccountRequest,
    ClosureService,
    Platform,
    organization_prefixes,
)
from shared.errors import ValidationFailed
from shared.records.audiences import AudienceRecord
from shared.records.closure import ClosureRecord
from shared.records.connections import Connection

ORG, USER, NAME = "org-1", "user-1", "Shop One"
BUDGET = timedelta(minutes=1)


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


class Closures:
    def __init__(self) -> None:
        self.records: dict[str, ClosureRecord] = {}

    def get(self, user_id: str) -> ClosureRecord | None:
        record = self.records.get(user_id)
        return record.model_copy(deep=True) if record else None

    def put(self, record: ClosureRecord) -> None:
        self.records[record.user_id] = record.model_copy(deep=True)


@dataclass
class Items:
    """The organization's table items: members, keys (with usage days) and its partition."""

    members: list[str] = field(default_factory=lambda: [USER, "user-2"])
    keys: dict[str, int] = field(default_factory=lambda: {"k1": 3, "k2": 1})
    partition: int = 7

    def delete_access(
        self,
        org_id: str,
        cursor: dict[str, str] | None,
        closed_at: datetime,
        before_delete: Callable[[list[str]], None],
    ) -> tuple[int, dict[str, str] | None]:
        before_delete(list(self.members))
        deleted, self.members = len(self.members), []
        return deleted, None

    def delete_idempotency(
        self, org_id: str, keys: Sequence[str], cursor: dict[str, str] | None
    ) -> tuple[int, dict[str, str] | None]:
        return 0, None

    def api_key_ids(self, org_id: str) -> list[str]:
        return sorted(self.keys)

    def delete_key(self, org_id: str, key_id: str) -> int:
        return self.keys.pop(key_id) + 1

    def delete_partition(self, org_id: str, limit: int) -> tuple[int, bool]:
        deleted = min(limit, self.partition)
        self.partition -= deleted
        return deleted, self.partition == 0


class Bucket:
    """Objects per prefix; ``crash_on`` makes that call fail as a timed-out step would."""

    def __init__(self, objects: dict[str, int], crash_on: int | None = None) -> None:
        self.objects = objects
        self.calls: list[str] = []
        self.crash_on = crash_on

    def delete_prefix(self, prefix: str, limit: int) -> tuple[int, bool]:
        self.calls.append(prefix)
        if self.crash_on is not None and len(self.calls) == self.crash_on:
            raise TimeoutError("the step ran out of time")
        deleted = min(limit, self.objects.get(prefix, 0))
        self.objects[prefix] = self.objects.get(prefix, 0) - deleted
        return deleted, self.objects[prefix] == 0


@dataclass
class Pool:
    """The user pool: who is enabled, and who is left."""

    users: dict[str, bool] = field(default_factory=lambda: {USER: True, "user-2": True})
    calls: list[str] = field(default_factory=list)

    def disable(self, user_id: str) -> bool:
        self.calls.append(f"disable {user_id}")
        if user_id not in self.users:
            return False
        self.users[user_id] = False
        return True

    def delete(self, user_id: str) -> bool:
        self.calls.append(f"delete {user_id}")
        return self.users.pop(user_id, None) is not None


class NoAudiences:
    def list_for_org(self, org_id: str) -> list[AudienceRecord]:
        return []


class Connections:
    def get(self, org_id: str) -> Connection | None:
        return Connection(org_id=org_id, status="active")


def no_platform() -> Platform:
    raise AssertionError("nothing is deleted on the platform unless asked")


@dataclass
class Payments:
    """The payments connection: connected until stopped, and whether the memberships were gone then."""

    items: Items
    connected: bool = True
    stopped_after_access: list[bool] = field(default_factory=list)

    def stop(self, org_id: str) -> bool:
        self.stopped_after_access.append(not self.items.members)
        was, self.connected = self.connected, False
        return was


@dataclass
class World:
    service: ClosureService
    closures: Closures
    items: Items
    data: Bucket
    clock: Clock
    pool: Pool
    payments: Payments
    started: list[str] = field(default_factory=list)

    def start(self, name: str, payload: dict[str, str]) -> None:
        self.started.append(name)


def world(data: Bucket) -> World:
    closures, items, clock, pool = Closures(), Items(), Clock(), Pool()
    payments = Payments(items)

    class Names:
        def name_of(self, org_id: str) -> str | None:
            return NAME if items.partition else None

    service = ClosureService(
        closures=closures,
        organizations=Names(),
        items=items,
        objects={"data": data, "artifacts": Bucket({f"orgs/{ORG}/": 4})},
        audiences=NoAudiences(),
        connections=Connections(),
        platform=no_platform,
        users=lambda: pool,
        payments=lambda: payments,
        clock=clock,
        batch=2,  # small pieces, so a phase takes several
    )
    return World(service, closures, items, data, clock, pool, payments)


def data_objects() -> dict[str, int]:
    return {prefix: 3 for role, prefix in organization_prefixes(ORG) if role == "data"}


def test_a_step_cut_short_midway_is_resumed_from_the_saved_progress() -> None:
    # Given: a closure whose step times out on its fourth S3 call, in the middle of the files
    data = Bucket(data_objects(), crash_on=4)
    w = world(data)
    w.service.start(USER, ORG, CloseAccountRequest(confirm_name=NAME), w.start)
    record = w.closures.get(USER)
    assert record is not None
    with pytest.raises(TimeoutError):
        w.service.advance(USER, record.closure_id, budget=BUDGET)
    w.service.record_failure(USER, record.closure_id, "States.Timeout", "")
    stopped = w.closures.get(USER)
    assert stopped is not None
    assert (stopped.state, stopped.phase) == ("failed", "objects")
    assert stopped.remedy is not None
    assert "Resume" in stopped.remedy
    calls_before = list(data.calls)

    # When: the person asks again (the name is checked again), and the new execution's step runs
    w.clock.now += timedelta(minutes=1)
    w.service.start(USER, None, CloseAccountRequest(confirm_name=NAME), w.start)
    finished = w.service.advance(USER, record.closure_id, budget=BUDGET)

    # Then: a second execution went on from the prefix it stopped in, and everything is gone
    assert w.started == [f"closure-{record.closure_id}-1", f"closure-{record.closure_id}-2"]
    assert finished.state == "completed"
    assert finished.attempt == 2
    resumed_at = data.calls[len(calls_before)]
    assert resumed_at == calls_before[-1]  # the prefix being deleted when it stopped, not the first
    # the first prefix, done before it stopped, is only looked at again by the final look for late arrivals
    assert data.calls[len(calls_before) :].count(calls_before[0]) == 1
    assert all(count == 0 for count in data.objects.values())
    # every data object counted once (the piece that crashed deleted nothing), and the artifacts
    assert finished.deleted["objects"] == sum(data_objects().values()) + 4
    assert (w.items.members, w.items.keys, w.items.partition) == ([], {}, 0)
    assert finished.deleted["keys"] == 6  # four usage days and two keys


def test_the_finished_record_is_a_receipt_that_names_no_organization() -> None:
    w = world(Bucket(data_objects()))
    w.service.start(USER, ORG, CloseAccountRequest(confirm_name=NAME), w.start)
    record = w.closures.get(USER)
    assert record is not None
    finished = w.service.advance(USER, record.closure_id, budget=BUDGET)
    assert finished.state == "completed"
    stored = w.closures.records[USER]
    assert stored.org_id is None
    assert stored.org_name is None
    assert NAME not in stored.model_dump_json()
    assert ORG not in stored.model_dump_json()


def test_the_other_members_are_disabled_with_their_membership_and_everyone_is_deleted_at_the_end() -> None:
    # Given: an organization of two members, closed by one of them
    w = world(Bucket(data_objects()))
    w.service.start(USER, ORG, CloseAccountRequest(confirm_name=NAME), w.start)
    record = w.closures.get(USER)
    assert record is not None

    # When: the closure runs
    finished = w.service.advance(USER, record.closure_id, budget=BUDGET)

    # Then: the other member was disabled before the memberships went (so they could not sign in
    # while the data was deleted); the person closing stayed able to sign in (to resume) until the
    # end; both are gone from the pool, and the receipt keeps only the count
    assert w.pool.calls == ["disable user-2", "delete user-2", f"delete {USER}"]
    assert w.pool.users == {}
    assert finished.deleted["users"] == 2
    assert finished.pool_users == []


def test_the_card_payments_stop_once_nobody_of_the_organization_can_act() -> None:
    # Given: an organization taking card payments
    w = world(Bucket(data_objects()))
    w.service.start(USER, ORG, CloseAccountRequest(confirm_name=NAME), w.start)
    record = w.closures.get(USER)
    assert record is not None

    # When: the closure runs
    finished = w.service.advance(USER, record.closure_id, budget=BUDGET)

    # Then: its payments were stopped (open checkouts expired, the account id destroyed) once, after
    # the memberships were gone, and counted with the access phase
    assert w.payments.stopped_after_access == [True]
    assert w.payments.connected is False
    assert finished.state == "completed"
    assert finished.deleted["access"] == 2 + 1  # two memberships and the payments connection


def test_asking_again_while_it_runs_starts_nothing_until_it_has_stalled() -> None:
    # Given: a closure under way
    w = world(Bucket(data_objects()))
    w.service.start(USER, ORG, CloseAccountRequest(confirm_name=NAME), w.start)
    # When: asked again at once, then after the stall limit without progress
    w.service.start(USER, None, CloseAccountRequest(confirm_name=NAME), w.start)
    assert len(w.started) == 1
    w.clock.now += STALLED_AFTER
    w.service.start(USER, None, CloseAccountRequest(confirm_name=NAME), w.start)
    # Then: only the stalled one is started again, as a new attempt
    assert len(w.started) == 2
    assert w.started[1].endswith("-2")


def test_resuming_checks_the_name_again() -> None:
    w = world(Bucket(data_objects()))
    w.service.start(USER, ORG, CloseAccountRequest(confirm_name=NAME), w.start)
    w.clock.now += STALLED_AFTER
    with pytest.raises(ValidationFailed) as refused:
        w.service.start(USER, None, CloseAccountRequest(confirm_name="Shop Two"), w.start)
    assert refused.value.field == "confirmName"
    assert len(w.started) == 1


def test_surrounding_spaces_are_ignored_but_case_is_not() -> None:
    w = world(Bucket(data_objects()))
    with pytest.raises(ValidationFailed):
        w.service.start(USER, ORG, CloseAccountRequest(confirm_name="shop one"), w.start)
    w.service.start(USER, ORG, CloseAccountRequest(confirm_name=f"  {NAME} "), w.start)
    assert len(w.started) == 1


def test_files_and_keys_written_after_their_phase_are_deleted_before_the_closure_ends() -> None:
    # Given: a closure during which a request already under way stores a snapshot and a job a key,
    # after the files and keys were deleted (while the organization's records are being deleted)
    data = Bucket(data_objects())
    w = world(data)
    late_prefix = f"snapshots/{ORG}/"
    original = w.items.delete_partition
    arrived: list[bool] = []

    def partition_then_late_writes(org_id: str, limit: int) -> tuple[int, bool]:
        if not arrived:
            arrived.append(True)
            data.objects[late_prefix] = 5
            w.items.keys["k3"] = 2
        return original(org_id, limit)

    w.items.delete_partition = partition_then_late_writes  # type: ignore[method-assign]
    w.service.start(USER, ORG, CloseAccountRequest(confirm_name=NAME), w.start)
    record = w.closures.get(USER)
    assert record is not None

    # When
    finished = w.service.advance(USER, record.closure_id, budget=BUDGET)

    # Then: they were found and deleted too, and counted
    assert finished.state == "completed"
    assert data.objects[late_prefix] == 0
    assert w.items.keys == {}
    assert finished.deleted["objects"] == sum(data_objects().values()) + 4 + 5
    assert finished.deleted["keys"] == 6 + 3
