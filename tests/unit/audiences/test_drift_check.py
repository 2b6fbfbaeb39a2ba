"""The scheduled look for drift (issue 25, item 2): what the marketer deleted in the platform's ads
manager is shown as deleted on the platform before their next refresh, sync or delete meets it.

Audiences are made by the audience service on the sandbox in process (a real Graph client); the
marketer's deletion is a DELETE on the sandbox's Graph API, as the ads manager makes it.
"""

from __future__ import annotations

import pytest

from shared.audiences.drift import DriftFound, check_connected_drift, check_drift
from shared.audiences.service import AudienceService
from shared.platform.errors import PlatformThrottled
from shared.records.audiences import AudienceRecord
from shared.records.connections import Connection
from tests.unit.audiences.test_audience_service import (
    MemoryAudiences,
    MemoryBlobs,
    SandboxConnections,
    Ticking,
    request,
)
from tests.unit.sandbox_platform import AD_ACCOUNT_ID, SandboxPlatform

ORG = "org-1"


class DriftAudiences(MemoryAudiences):
    """``DriftStore`` in memory: ``save_unchanged`` writes over the revision read only, as
    DynamoAudienceStore's (MemoryAudiences')."""


class Connected:
    """``ActiveConnections``: the given connections."""

    def __init__(self, *connections: Connection) -> None:
        self.connections = list(connections)

    def active(self) -> list[Connection]:
        return self.connections


@pytest.fixture
def platform() -> SandboxPlatform:
    return SandboxPlatform()


@pytest.fixture
def audiences() -> DriftAudiences:
    return DriftAudiences()


@pytest.fixture
def connections(platform: SandboxPlatform) -> SandboxConnections:
    return SandboxConnections(platform)


@pytest.fixture
def service(audiences: DriftAudiences, connections: SandboxConnections) -> AudienceService:
    return AudienceService(
        audiences=audiences, blobs=MemoryBlobs(), connections=connections, clock=Ticking(), batch_size=10
    )


def deleted_in_ads_manager(
    platform: SandboxPlatform, connections: SandboxConnections, platform_id: str
) -> None:
    assert connections.graph.delete(platform_id).body == {"success": True}


def test_an_audience_deleted_in_the_ads_manager_is_listed_as_deleted_on_the_platform(
    platform: SandboxPlatform,
    audiences: DriftAudiences,
    connections: SandboxConnections,
    service: AudienceService,
) -> None:
    # Given: two active audiences, one of which the marketer deleted in the ads manager
    kept = service.create(ORG, request(15))
    gone = service.create(ORG, request(15))
    assert gone.platform_custom_audience_id is not None
    deleted_in_ads_manager(platform, connections, gone.platform_custom_audience_id)
    platform.forget_calls()
    # When the scheduled check runs
    found = check_drift(ORG, audiences, connections, Ticking())
    # Then the deleted one is recorded as deleted on the platform, with what to do; the other stays
    assert found == DriftFound(audiences_checked=2, audiences_deleted=1)
    recorded = audiences.get(ORG, gone.audience_id)
    assert recorded is not None
    assert recorded.status == "deleted_on_platform"
    assert recorded.failure is not None
    assert recorded.failure.code == "platform_audience_deleted"
    assert "snapshot" in (recorded.failure.remedy or "")
    still = audiences.get(ORG, kept.audience_id)
    assert still is not None
    assert still.status == "active"
    # And the account's audiences were listed once, not read one by one
    assert [c["path"] for c in platform.calls()] == [f"/{AD_ACCOUNT_ID}/customaudiences"]


def test_an_audience_changed_since_it_was_read_is_left_for_the_next_run(
    platform: SandboxPlatform,
    audiences: DriftAudiences,
    connections: SandboxConnections,
    service: AudienceService,
) -> None:
    # Given: an audience deleted in the ads manager, whose record another writer changes while the
    # check is listing the account (a delete in the service, a sync finishing)
    gone = service.create(ORG, request(15))
    assert gone.platform_custom_audience_id is not None
    deleted_in_ads_manager(platform, connections, gone.platform_custom_audience_id)
    listed = audiences.list_for_org

    def read_then_changed(org_id: str) -> list[AudienceRecord]:
        records = listed(org_id)
        changed = audiences.items[(ORG, gone.audience_id)]
        # Another write in the same second: updated_at alone could not tell, the revision moves.
        changed.name, changed.revision = "Renamed meanwhile", changed.revision + 1
        return records

    audiences.list_for_org = read_then_changed  # type: ignore[method-assign]
    # When
    found = check_drift(ORG, audiences, connections, Ticking())
    # Then the other writer's record stands; nothing is counted as recorded
    assert found.audiences_deleted == 0
    recorded = audiences.get(ORG, gone.audience_id)
    assert recorded is not None
    assert (recorded.name, recorded.status) == ("Renamed meanwhile", "active")


def test_an_organization_with_nothing_on_the_platform_costs_no_call(
    platform: SandboxPlatform, audiences: DriftAudiences, connections: SandboxConnections
) -> None:
    platform.forget_calls()
    assert check_drift(ORG, audiences, connections, Ticking()) == DriftFound()
    assert platform.calls() == []


def test_one_organization_failing_does_not_stop_the_others_and_invalid_tokens_are_skipped(
    platform: SandboxPlatform,
    audiences: DriftAudiences,
    connections: SandboxConnections,
    service: AudienceService,
) -> None:
    # Given: three connected organizations: one whose audience was deleted in the ads manager, one the
    # platform throttles now, and one whose token is known to be invalid
    gone = service.create(ORG, request(15))
    assert gone.platform_custom_audience_id is not None
    deleted_in_ads_manager(platform, connections, gone.platform_custom_audience_id)
    throttled = service.create("org-throttled", request(15))
    service.create("org-revoked", request(15))
    reader = connections.client_for

    def client_for(org_id: str):  # type: ignore[no-untyped-def]
        if org_id == "org-throttled":
            raise PlatformThrottled("Application request limit reached")
        return reader(org_id)

    connections.client_for = client_for  # type: ignore[method-assign]
    active = Connected(
        Connection(org_id="org-throttled", status="active", ad_account_id=AD_ACCOUNT_ID),
        Connection(org_id=ORG, status="active", ad_account_id=AD_ACCOUNT_ID),
        Connection(
            org_id="org-revoked", status="active", ad_account_id=AD_ACCOUNT_ID, token_health="invalid"
        ),
    )
    # When
    summary = check_connected_drift(active, audiences, connections, Ticking())
    # Then the throttled one is counted as failed (looked at again next run), the deleted audience is
    # recorded, and the revoked organization is not called at all
    assert summary.model_dump() == {
        "organizations": 2,
        "audiences_deleted": 1,
        "lookalikes_deleted": 0,
        "adverts_deleted": 0,
        "audiences_changed": 0,
        "failed": 1,
    }
    assert audiences.get("org-throttled", throttled.audience_id).status == "active"  # type: ignore[union-attr]


def test_a_lookalike_deleted_in_the_ads_manager_is_marked_and_its_seed_stays_active(
    platform: SandboxPlatform,
    audiences: DriftAudiences,
    connections: SandboxConnections,
    service: AudienceService,
) -> None:
    # Given: a prospecting audience (seed and lookalike) whose lookalike the marketer deleted
    created = service.create(
        ORG, request(120, objective="prospecting", lookalike_size=2, lookalike_country="GB")
    )
    assert created.lookalike is not None
    record = audiences.get(ORG, created.audience_id)
    assert record is not None
    assert record.lookalike is not None
    assert record.lookalike.platform_audience_id is not None
    deleted_in_ads_manager(platform, connections, record.lookalike.platform_audience_id)
    # When
    found = check_drift(ORG, audiences, connections, Ticking())
    # Then the lookalike is shown as deleted on the platform; the seed audience stays active
    assert (found.audiences_deleted, found.lookalikes_deleted) == (0, 1)
    after = audiences.get(ORG, created.audience_id)
    assert after is not None
    assert after.lookalike is not None
    assert (after.status, after.lookalike.status) == ("active", "deleted_on_platform")


def test_an_audience_and_lookalike_renamed_in_the_ads_manager_are_recorded_once_and_never_renamed_back(
    platform: SandboxPlatform,
    audiences: DriftAudiences,
    connections: SandboxConnections,
    service: AudienceService,
) -> None:
    # Given: a prospecting audience whose seed and lookalike the marketer renamed in the ads manager
    created = service.create(
        ORG, request(120, objective="prospecting", lookalike_size=2, lookalike_country="GB")
    )
    record = audiences.get(ORG, created.audience_id)
    assert record is not None
    assert record.lookalike is not None
    seed, lookalike = record.platform_custom_audience_id, record.lookalike.platform_audience_id
    assert seed is not None
    assert lookalike is not None
    for platform_id, name in ((seed, "Seed, renamed"), (lookalike, "Lookalike, renamed")):
        assert connections.graph.post(platform_id, {"name": name}).body == {"success": True}
    platform.forget_calls()
    # When the check runs twice
    first = check_drift(ORG, audiences, connections, Ticking())
    recorded = audiences.get(ORG, created.audience_id)
    second = check_drift(ORG, audiences, connections, Ticking())
    # Then both renames are recorded with the service's and the platform's names, once: the second run
    # finds the same and writes nothing
    assert (first.audiences_changed, second.audiences_changed) == (1, 0)
    assert recorded is not None
    changes = {(c.kind, c.platform_id): c for c in recorded.platform_changes}
    assert set(changes) == {("audience", seed), ("lookalike", lookalike)}
    assert (changes[("audience", seed)].service_value, changes[("audience", seed)].platform_value) == (
        record.name,
        "Seed, renamed",
    )
    assert changes[("lookalike", lookalike)].platform_value == "Lookalike, renamed"
    # And the platform was only read (one listing per run), never written
    assert [(c["method"], c["path"]) for c in platform.calls()] == [
        ("GET", f"/{AD_ACCOUNT_ID}/customaudiences"),
    ] * 2


def test_a_name_changed_back_on_the_platform_clears_the_recorded_change(
    platform: SandboxPlatform,
    audiences: DriftAudiences,
    connections: SandboxConnections,
    service: AudienceService,
) -> None:
    # Given: an audience renamed in the ads manager, seen by a check, then renamed back there
    created = service.create(ORG, request(15))
    platform_id = created.platform_custom_audience_id
    assert platform_id is not None
    connections.graph.post(platform_id, {"name": "Renamed"})
    check_drift(ORG, audiences, connections, Ticking())
    connections.graph.post(platform_id, {"name": audiences.get(ORG, created.audience_id).name})  # type: ignore[union-attr]
    # When the check runs again
    found = check_drift(ORG, audiences, connections, Ticking())
    # Then nothing differs any more, and the record says so
    assert found.audiences_changed == 1
    assert audiences.get(ORG, created.audience_id).platform_changes == []  # type: ignore[union-attr]
