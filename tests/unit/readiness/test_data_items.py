"""The checklist's data items follow the real data state: the synced dataset, the model trained on
it (its age and measured drift) and the customers with a usable identifier per lookalike country."""

from __future__ import annotations

from datetime import timedelta

import pytest

from shared.datasources.coverage import Coverage
from shared.errors import NotFound
from shared.readiness.service import ReadinessItem, ReadinessQuery, ReadinessService
from shared.records.datasources import DatasetVersion, ModelTraining
from shared.records.models import ModelRecord
from tests.unit.records import NOW, RULES, coverage, dataset_version, model_record


class NoConnection:
    def inspect(self, org_id: str) -> object:
        raise NotFound("No ad account is connected.", remedy="Connect one.")


class Models:
    def __init__(self, record: ModelRecord | None) -> None:
        self.record = record

    def get(self, org_id: str, name: str) -> ModelRecord | None:
        return self.record


class Datasets:
    """The version in force and the newest synced (the one in force unless given)."""

    def __init__(self, version: DatasetVersion | None, newest: DatasetVersion | None = None) -> None:
        self.version = version
        self.newest = newest or version

    def current(self, org_id: str) -> DatasetVersion | None:
        return self.version

    def latest(self, org_id: str) -> DatasetVersion | None:
        return self.newest


class Coverages:
    def __init__(self, coverage: Coverage) -> None:
        self.value = coverage

    def coverage(self, dataset: DatasetVersion) -> Coverage:
        return self.value


def covering(usable_by_country: dict[str, int]) -> Coverage:
    """Usable customers per country, and 50 more in GB without a usable identifier."""
    countries = [c for c, n in usable_by_country.items() for _ in range(n)] + ["GB"] * 50
    usable = [True] * (len(countries) - 50) + [False] * 50
    return coverage([f"u{i:05d}" for i in range(len(countries))], countries, usable)


def items(
    record: ModelRecord | None,
    version: DatasetVersion | None,
    covered: Coverage | None = None,
    query: ReadinessQuery | None = None,
    newest: DatasetVersion | None = None,
) -> dict[str, ReadinessItem]:
    service = ReadinessService(
        connections=NoConnection(),
        models=Models(record),
        datasets=Datasets(version, newest),
        coverages=Coverages(covered or covering({"GB": 200})),
        rules=RULES,
        clock=lambda: NOW,
    )
    checked = service.check("shop", query or ReadinessQuery())
    return {item.id: item for item in checked.items if item.group == "data"}


def test_a_fresh_model_on_the_current_dataset_and_reachable_customers_pass() -> None:
    found = items(model_record(), dataset_version())
    assert {k: v.status for k, v in found.items()} == {"model_fresh": "pass", "enough_users": "pass"}


def test_without_a_synced_dataset_both_data_items_fail() -> None:
    found = items(None, None)
    assert found["model_fresh"].status == "fail"
    assert found["enough_users"].status == "fail"
    assert "No data source is synced" in found["enough_users"].evidence


def purchase_training(version: DatasetVersion, state: str, **fields: str) -> DatasetVersion:
    """``version`` with its purchase model's training ``state``."""
    training = ModelTraining(model_name="shop-purchase", state=state, updated_at=NOW, **fields)  # type: ignore[arg-type]
    return version.model_copy(update={"training": {"purchase": training}})


def test_a_first_sync_in_force_though_training_refused_it_is_read_and_the_model_item_says_why() -> None:
    # Given a young shop's first sync, in force though its purchase training refused the data
    refused = purchase_training(
        dataset_version(),
        "failed",
        error="Training needs at least 20 order lines; got 3.",
        remedy="Sync an orders file with at least 20 order lines.",
    )

    # When the checklist is read
    found = items(None, refused)

    # Then its customers are counted (the data is synced and in use)
    assert found["enough_users"].status == "pass"
    assert "No data source is synced" not in found["enough_users"].evidence
    # And the model item says no model could be trained on it, why, and what to do
    assert found["model_fresh"].status == "fail"
    assert found["model_fresh"].evidence == (
        "No model could be trained on the data in use (version v1). Training needs at least 20 order "
        "lines; got 3."
    )
    assert found["model_fresh"].remedy == "Sync an orders file with at least 20 order lines."


@pytest.mark.parametrize(
    ("state", "evidence", "remedy"),
    [
        (
            "running",
            "The data synced (version v1) is put in use when its purchase model's training ends",
            "Wait for the training to end",
        ),
        # refused before first syncs were put in use whatever training said
        ("failed", "The data synced (version v1) is not in use", "Sync the shop's files again"),
    ],
)
def test_with_a_sync_stored_but_nothing_in_force_the_checklist_does_not_say_nothing_is_synced(
    state: str, evidence: str, remedy: str
) -> None:
    # Given a first sync stored, nothing in force
    found = items(None, None, newest=purchase_training(dataset_version(), state))

    # Then the identifiers item says why no data is in use, and what to do
    assert found["enough_users"].status == "fail"
    assert found["enough_users"].evidence.startswith(evidence)
    assert found["enough_users"].remedy is not None
    assert found["enough_users"].remedy.startswith(remedy)


def test_a_model_trained_on_an_older_dataset_fails() -> None:
    found = items(model_record(dataset_version="v1"), dataset_version("v2"))
    assert found["model_fresh"].status == "fail"
    assert "trained on v1, not on the current dataset v2" in found["model_fresh"].evidence


def test_a_model_from_uploaded_files_beside_refused_data_in_force_says_why_not_to_wait() -> None:
    # Given a model trained on files given to the training tool, and the shop's first sync in force
    # though its purchase training refused the data (the item said to wait for a training that had
    # already ended)
    refused = purchase_training(
        dataset_version("v2"),
        "failed",
        error="Order history spans 20 days; training needs at least 104 days.",
        remedy="Upload a longer order history.",
    )

    # When the checklist is read
    found = items(model_record(dataset_version=None), refused)

    # Then the model item says the training on the data in use failed, why, and what to do
    assert found["model_fresh"].status == "fail"
    assert found["model_fresh"].evidence == (
        "shop-purchase was trained on uploaded files, not on the current dataset v2, and its training on "
        "v2 failed: Order history spans 20 days; training needs at least 104 days."
    )
    assert found["model_fresh"].remedy == "Upload a longer order history."


def test_a_model_past_its_stale_age_fails() -> None:
    found = items(model_record(trained_at=NOW - timedelta(days=45)), dataset_version())
    assert found["model_fresh"].status == "fail"
    assert "45 days old" in found["model_fresh"].evidence


def test_a_model_whose_features_drifted_fails_as_predict_says_retrain() -> None:
    # Given a fresh model whose drift check measured a PSI above the threshold
    found = items(model_record(max_feature_psi=0.35), dataset_version())

    # Then the checklist fails it with the measurement
    assert found["model_fresh"].status == "fail"
    assert "PSI 0.35 > 0.2" in found["model_fresh"].evidence
    assert found["model_fresh"].remedy == "Sync the shop's latest files to retrain."


@pytest.mark.parametrize(("usable_in_au", "status"), [(99, "fail"), (100, "pass")])
def test_a_lookalike_seed_is_counted_in_its_country(usable_in_au: int, status: str) -> None:
    # Given 300 usable customers in GB and some in AU
    covered = covering({"GB": 300, "AU": usable_in_au})
    query = ReadinessQuery(objective="prospecting", lookalike_country="AU")

    # When prospecting in Australia is checked, then only Australia's usable customers count
    found = items(model_record(), dataset_version(), covered, query)
    assert found["enough_users"].status == status
    assert f"{usable_in_au} customers in AU" in found["enough_users"].evidence
