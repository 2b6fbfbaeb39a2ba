"""Model records in DynamoDB: registering a version never loses a prediction counted meanwhile, and
every time is stored the one way (``clock.iso``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import pytest

from shared.records.models import ModelRecord, UsageStats
from shared.repositories.models import DynamoModelStore
from tests.unit.moto_aws import offline_aws
from tests.unit.moto_aws import table as main_table

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.service_resource import Table

ORG = "org-1"
TRAINED = datetime(2026, 11, 1, 8, 30, 15, 123456, tzinfo=UTC)
PREDICTED = datetime(2026, 11, 2, 12, 0, tzinfo=UTC)


@pytest.fixture
def table(monkeypatch: pytest.MonkeyPatch) -> Iterator[Table]:
    with offline_aws(monkeypatch):
        yield main_table("main")


def model(version: str = "v1", **changes: Any) -> ModelRecord:
    return ModelRecord(
        org_id=ORG,
        name="buyers",
        type="purchase",
        version=version,
        trained_at=TRAINED,
        training_cutoff=TRAINED,
        training_user_count=100,
        bundle_key=f"models/buyers/{version}/bundle.npz",
        bundle_sha256="0" * 64,
        **changes,
    )


class WriteInterleaving:
    """A table on which ``before_write`` runs once, just before the first write reaches DynamoDB: a
    concurrent request landing between whatever the caller read and what it writes."""

    def __init__(self, table: Table, before_write: Callable[[], None]) -> None:
        self._table = table
        self._before_write: Callable[[], None] | None = before_write

    def _interleave(self) -> None:
        if self._before_write is not None:
            hook, self._before_write = self._before_write, None
            hook()

    def put_item(self, **kwargs: Any) -> Any:
        self._interleave()
        return self._table.put_item(**kwargs)

    def update_item(self, **kwargs: Any) -> Any:
        self._interleave()
        return self._table.update_item(**kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._table, name)


def test_a_prediction_counted_while_a_new_version_is_stored_is_kept(table: Table) -> None:
    # Given a model with three predictions counted
    counter = DynamoModelStore(table)
    counter.put(model("v1"))
    for _ in range(3):
        counter.record_prediction(ORG, "buyers", PREDICTED)

    # When version 2 is stored while a fourth prediction is counted by another request
    registry = DynamoModelStore(
        WriteInterleaving(table, lambda: counter.record_prediction(ORG, "buyers", PREDICTED))
    )
    registry.put(model("v2"))

    # Then the model is at version 2 and all four predictions are counted
    stored = counter.get(ORG, "buyers")
    assert stored is not None
    assert stored.version == "v2"
    assert stored.usageStats == UsageStats(total_predictions=4)
    assert stored.last_prediction_date == PREDICTED


def test_a_new_model_starts_with_the_counters_it_was_given(table: Table) -> None:
    # Given a record that carries counters (a model copied from elsewhere)
    record = model(usageStats=UsageStats(total_predictions=7), last_prediction_date=PREDICTED)

    # When it is stored as a new model
    store = DynamoModelStore(table)
    store.put(record)

    # Then its counters are stored, and counting continues from them
    assert store.record_prediction(ORG, "buyers", PREDICTED) == 8


def test_a_new_version_clears_what_it_leaves_empty(table: Table) -> None:
    # Given version 1 with a drift measurement
    store = DynamoModelStore(table)
    store.put(model("v1", max_feature_psi=0.3, feature_psi={"recency": 0.3}, drift_checked_at=PREDICTED))

    # When version 2, not measured yet, is stored
    store.put(model("v2"))

    # Then the old measurement is gone with the old version
    stored = store.get(ORG, "buyers")
    assert stored is not None
    assert (stored.max_feature_psi, stored.feature_psi, stored.drift_checked_at) == (None, None, None)


def test_times_are_stored_as_iso_seconds_with_a_z(table: Table) -> None:
    # Given a model trained at a time with microseconds
    store = DynamoModelStore(table)

    # When it is stored
    store.put(model("v1"))

    # Then the stored times are clock.iso's form
    item = table.get_item(Key={"pk": f"ORG#{ORG}", "sk": "MODEL#buyers"})["Item"]
    assert item["trained_at"] == "2026-11-01T08:30:15Z"
    assert item["training_cutoff"] == "2026-11-01T08:30:15Z"
