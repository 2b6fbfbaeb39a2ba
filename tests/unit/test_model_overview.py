"""The Models page's view of each model: freshness by age, drift as the last check measured it, and
the training of the newest synced data, in force or not."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from shared.ml.freshness import FreshnessRules
from shared.predictions.model_overview import model_overview
from shared.records.datasources import DatasetVersion, ModelTraining
from shared.records.models import ModelRecord

ORG = "shop-1"
NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)
RULES = FreshnessRules(stale_after_days=30, retrain_after_days=60, psi_threshold=0.2)


def model(name: str, kind: str, age_days: float, **fields: object) -> ModelRecord:
    trained = NOW - timedelta(days=age_days)
    return ModelRecord.model_validate(
        {
            "org_id": ORG,
            "name": name,
            "type": kind,
            "version": f"{name}-v1",
            "trained_at": trained,
            "training_cutoff": trained - timedelta(days=30),
            "training_user_count": 480,
            "metrics": {"auc": 0.81},
            "bundle_key": "k",
            "bundle_sha256": "0" * 64,
            **fields,
        }
    )


class Models:
    def __init__(self, *records: ModelRecord) -> None:
        self.records = list(records)

    def list_for_org(self, org_id: str) -> list[ModelRecord]:
        return [r for r in self.records if r.org_id == org_id]


class Datasets:
    """The version in force and, when a newer sync is not (yet) in force, the newest."""

    def __init__(self, current: DatasetVersion | None, newest: DatasetVersion | None = None) -> None:
        self._current = current
        self._newest = newest or current

    def current(self, org_id: str) -> DatasetVersion | None:
        return self._current

    def latest(self, org_id: str) -> DatasetVersion | None:
        return self._newest


def dataset(purchase_state: str, version: str = "v2", **fields: str) -> DatasetVersion:
    return DatasetVersion(
        org_id=ORG,
        version=version,
        created_at=NOW,
        keys={},
        row_counts={},
        rows_read={},
        rejected_count=0,
        rejected_rows_accepted=False,
        training={
            "purchase": ModelTraining(
                model_name="shop-purchase",
                state=purchase_state,
                stage="fitting",
                updated_at=NOW,  # type: ignore[arg-type]
                **fields,
            )
        },
    )


def test_an_old_model_never_checked_for_drift_is_stale_and_says_drift_is_not_measured() -> None:
    # Given a purchase model trained 40 days ago, never drift-checked
    models = Models(model("shop-purchase", "purchase", 40))

    # When
    [shown] = model_overview(ORG, models=models, datasets=Datasets(None), rules=RULES, now=NOW).models

    # Then it is stale but not yet due for a retrain, and drift is unknown rather than passing
    assert (shown.freshness.age_days, shown.freshness.is_stale) == (40.0, True)
    assert shown.freshness.recommended_retrain is False
    assert shown.freshness.reasons == ["model is 40 days old (stale after 30)"]
    assert (shown.drift.checked_at, shown.drift.drifted, shown.drift.max_feature_psi) == (None, None, None)
    assert (shown.training_user_count, shown.metrics) == (480, {"auc": 0.81})
    assert shown.training is None


def test_a_drifted_feature_recommends_a_retrain_however_young_the_model() -> None:
    # Given a model trained 5 days ago whose last drift check found a feature shifted
    checked = NOW - timedelta(hours=2)
    models = Models(
        model(
            "shop-purchase",
            "purchase",
            5,
            max_feature_psi=0.35,
            feature_psi={"recency_days": 0.05, "spend_90d": 0.35},
            drift_checked_at=checked,
        )
    )

    # When
    [shown] = model_overview(ORG, models=models, datasets=Datasets(None), rules=RULES, now=NOW).models

    # Then
    assert shown.freshness.is_stale is False
    assert shown.freshness.recommended_retrain is True
    assert shown.freshness.reasons == ["a feature drifted (PSI 0.35 > 0.2): retrain"]
    assert (shown.drift.drifted, shown.drift.checked_at) == (True, checked)
    assert list(shown.drift.feature_psi) == ["spend_90d", "recency_days"]  # largest first


def test_each_model_shows_its_own_training_on_the_current_dataset() -> None:
    # Given both models, and the current dataset training the purchase model
    models = Models(model("shop-recommendations", "recommendation", 1), model("shop-purchase", "purchase", 1))

    # When
    listed = model_overview(ORG, models=models, datasets=Datasets(dataset("running")), rules=RULES, now=NOW)

    # Then models are sorted by name; the purchase model shows its running training, the other none
    assert [m.name for m in listed.models] == ["shop-purchase", "shop-recommendations"]
    assert listed.current_dataset_version == "v2"
    purchase, recommendations = listed.models
    assert purchase.training is not None
    assert (purchase.training.state, purchase.training.stage, purchase.training.dataset_version) == (
        "running",
        "fitting",
        "v2",
    )
    assert purchase.training.in_force
    assert recommendations.training is None


def test_a_newer_sync_whose_purchase_training_failed_is_shown_beside_the_data_still_in_force() -> None:
    # Given the data in force (v2, trained) and a newer sync (v3) whose purchase training failed
    models = Models(model("shop-purchase", "purchase", 1))
    failed = dataset(
        "failed", "v3", error="Training needs at least 20 order lines; got 3.", remedy="Sync more."
    )
    datasets = Datasets(dataset("succeeded"), newest=failed)

    # When
    listed = model_overview(ORG, models=models, datasets=datasets, rules=RULES, now=NOW)

    # Then v2 is still in force, and the model shows its failed training on v3, not in force, with why
    assert (listed.current_dataset_version, listed.newest_dataset_version) == ("v2", "v3")
    [purchase] = listed.models
    assert purchase.training is not None
    assert (purchase.training.dataset_version, purchase.training.in_force) == ("v3", False)
    assert (purchase.training.state, purchase.training.error, purchase.training.remedy) == (
        "failed",
        "Training needs at least 20 order lines; got 3.",
        "Sync more.",
    )


def test_a_first_sync_refused_for_training_is_in_force_with_no_model_and_the_list_says_why() -> None:
    # Given a young shop's first sync (v1), in force though its purchase training refused the data
    refused = dataset(
        "failed",
        "v1",
        error="Training needs at least 20 order lines; got 3.",
        remedy="Sync an orders file with at least 20 order lines.",
    )

    # When the models are listed (there are none)
    listed = model_overview(ORG, models=Models(), datasets=Datasets(refused), rules=RULES, now=NOW)

    # Then the list says v1 is in force, and why no model was trained on it and what to do
    assert (listed.models, listed.current_dataset_version, listed.newest_dataset_version) == ([], "v1", "v1")
    training = listed.purchase_training
    assert training is not None
    assert (training.dataset_version, training.in_force, training.state) == ("v1", True, "failed")
    assert (training.error, training.remedy) == (
        "Training needs at least 20 order lines; got 3.",
        "Sync an orders file with at least 20 order lines.",
    )


def test_the_models_page_says_what_a_model_beat_to_be_made_current() -> None:
    # Given a recommendation model whose holdout figures beat both simple methods
    metrics = {"ndcg_at_10": 0.52, "popularity_ndcg_at_10": 0.30, "own_history_ndcg_at_10": 0.50}
    models = Models(model("picks", "recommendation", 1, metrics=metrics), model("old", "purchase", 1))
    # When the page lists the models
    listed = model_overview(
        ORG, models=Models(*models.records), datasets=Datasets(None), rules=RULES, now=NOW
    )
    picks, old = (m for m in sorted(listed.models, key=lambda m: m.name != "picks"))
    # Then it says in words what the model beat and by how much; a model trained before the gate
    # recorded the simple methods has no verdict rather than a made-up one
    assert picks.quality_gate is not None
    assert picks.quality_gate.passed
    assert picks.quality_gate.sentence == (
        "It beat the strongest simple method on your latest orders, recommending each customer's own "
        "most-bought products, then the best sellers: NDCG@10 0.520 against 0.500 (0.020 higher)."
    )
    assert old.quality_gate is None
