"""The event store on moto's DynamoDB (shared/repositories/events.py): each version's purchases, and
the pointers that keep versions sent in order."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import boto3
import pytest

from shared.records.events import EventRejection, PurchaseSend
from shared.repositories.events import DynamoEventStore
from tests.unit.moto_aws import REGION, offline_aws, table

NOW = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)


@pytest.fixture
def store(monkeypatch: pytest.MonkeyPatch) -> Iterator[DynamoEventStore]:
    with offline_aws(monkeypatch):
        yield DynamoEventStore(table(), boto3.client("dynamodb", region_name=REGION))


def record(version: str, **changes: object) -> PurchaseSend:
    return PurchaseSend(org_id="org-1", dataset_version=version, created_at=NOW, updated_at=NOW).model_copy(
        update=changes
    )


def test_a_versions_purchases_are_stored_and_read_back(store: DynamoEventStore) -> None:
    saved = record(
        "v1",
        position=2000,
        sent=1998,
        reasons={"refused:100/2804019": 2},
        rejections=[EventRejection(event_id="o-7", reason="bad", remedy="fix", platform_code=100)],
        cutoff=NOW,
    )
    store.put_purchases(saved)
    assert store.get_purchases("org-1", "v1") == saved
    assert store.get_purchases("org-1", "v2") is None


def test_finishing_a_version_moves_the_sent_pointer_and_clears_the_part_sent_one(
    store: DynamoEventStore,
) -> None:
    store.mark_part_sent("org-1", "v1")
    assert store.pointers("org-1") == (None, "v1")
    store.finish_purchases(record("v1", state="sent"))
    assert store.pointers("org-1") == ("v1", None)
    assert store.get_purchases("org-1", "v1") is not None


def test_the_sent_pointer_never_moves_back(store: DynamoEventStore) -> None:
    # Given a later version sent first
    store.finish_purchases(record("v2", state="sent"))
    # When an earlier one finishes after it
    store.finish_purchases(record("v1", state="sent"))
    # Then the pointer stays on the later version, and the earlier one's outcome is still stored
    assert store.pointers("org-1") == ("v2", None)
    stored = store.get_purchases("org-1", "v1")
    assert stored is not None
    assert stored.state == "sent"
