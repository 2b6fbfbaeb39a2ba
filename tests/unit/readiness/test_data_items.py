"""The checklist's data items follow the real data state: the synced dataset, the model trained on
it (its age and measured drift) and the customers with a usable identifier per lookalike country."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from shared.datasources.coverage import FLAGS, Coverage
from shared.errors import NotFound
from shared.ml.freshness import FreshnessRules
from shared.readiness.service import ReadinessItem, ReadinessQuery, ReadinessService
from shared.records.datasources import DatasetVersion
from shared.records.models import ModelRecord

NOW = datetime(2026, 11, 23, 12, tzinfo=UTC)
RULES = FreshnessRules(stale_after_days=30, retrain_after_days=60, psi_threshold=0.2)


class NoConnection:
    def inspect(self, org_id: str) -> object:
        raise NotFound("No ad account is connected.", remedy="Connect one.")


class Models:
    def __init__(self, record: ModelRecord | None) -> None:
        self.record = record

    def get(self, org_id: str, name: str) -> ModelRecord | None:
        return self.record


class Datasets:
    def __init__(self, version: DatasetVersion | None) -> None:
        self.version = version

    def current(self, org_id: str) -> DatasetVersion | None:
        return self.version


class Coverages:
    def __init__(self, coverage: Coverage) -> None:
        self.value = coverage

    def coverage(self, dataset: DatasetVersion) -> Coverage:
        return self.value


def dataset(version: str = "v2") -> DatasetVersion:
    return DatasetVersion(
        org_id="shop",
        version=version,
        created_at=NOW,
        keys={},
        row_counts={},
        rows_read={},
        rejected_count=0,
        rejected_rows_accepted=False,
    )


def model(**changes: object) -> ModelRecord:
    fields: dict[str, object] = {
        "org_id": "shop",
        "name": "shop-purchase",
        "type": "purchase",
        "version": "m1",
        "trained_at": NOW - timedelta(days=1),
        "training_cutoff": NOW - timedelta(days=31),
        "training_user_count": 500,
        "bundle_key": "b",
        "bundle_sha256": "s",
        "dataset_version": "v2",
    }
    return ModelRecord.model_validate({**fields, **changes})


def coverage(usable_by_country: dict[str, int]) -> Coverage:
    countries = [c for c, n in usable_by_country.items() for _ in range(n)] + ["GB"] * 50
    usable = np.array([True] * (len(countries) - 50) + [False] * 50)
    flags = {name: usable.copy() for name in FLAGS}
    return Coverage(
        user_ids=np.array([f"u{i:05d}" for i in range(len(countries))]),
        countries=np.array(countries, dtype="<U2"),
        flags=flags,
    )


def items(
    record: ModelRecord | None,
    version: DatasetVersion | None,
    covered: Coverage | None = None,
    query: ReadinessQuery | None = None,
) -> dict[str, ReadinessItem]:
    service = ReadinessService(
        connections=NoConnection(),
        models=Models(record),
        datasets=Datasets(version),
        coverages=Coverages(covered or coverage({"GB": 200})),
        rules=RULES,
        clock=lambda: NOW,
    )
    checked = service.check("shop", query or ReadinessQuery())
    return {item.id: item for item in checked.items if item.group == "data"}


def test_a_fresh_model_on_the_current_dataset_and_reachable_customers_pass() -> None:
    found = items(model(), dataset())
    assert {k: v.status for k, v in found.items()} == {"model_fresh": "pass", "enough_users": "pass"}


def test_without_a_synced_dataset_both_data_items_fail() -> None:
    found = items(None, None)
    assert found["model_fresh"].status == "fail"
    assert found["enough_users"].status == "fail"
    assert "No data source is synced" in found["enough_users"].evidence


def test_a_model_trained_on_an_older_dataset_fails() -> None:
    found = items(model(dataset_version="v1"), dataset("v2"))
    assert found["model_fresh"].status == "fail"
    assert "trained on v1, not on the current dataset v2" in found["model_fresh"].evidence


def test_a_model_past_its_stale_age_fails() -> None:
    found = items(model(trained_at=NOW - timedelta(days=45)), dataset())
    assert found["model_fresh"].status == "fail"
    assert "45 days old" in found["model_fresh"].evidence


def test_a_model_whose_features_drifted_fails_as_predict_says_retrain() -> None:
    # Given a fresh model whose drift check measured a PSI above the threshold
    found = items(model(max_feature_psi=0.35), dataset())

    # Then the checklist fails it with the measurement
    assert found["model_fresh"].status == "fail"
    assert "PSI 0.35 > 0.2" in found["model_fresh"].evidence
    assert found["model_fresh"].remedy == "Sync the shop's latest files to retrain."


@pytest.mark.parametrize(("usable_in_au", "status"), [(99, "fail"), (100, "pass")])
def test_a_lookalike_seed_is_counted_in_its_country(usable_in_au: int, status: str) -> None:
    # Given 300 usable customers in GB and some in AU
    covered = coverage({"GB": 300, "AU": usable_in_au})
    query = ReadinessQuery(objective="prospecting", lookalike_country="AU")

    # When prospecting in Australia is checked, then only Australia's usable customers count
    found = items(model(), dataset(), covered, query)
    assert found["enough_users"].status == status
    assert f"{usable_in_au} customers in AU" in found["enough_users"].evidence
