"""What the dashboard's Models page shows of each model: its metrics, how fresh it is and whether its
features drifted, how many users it was trained on, and its training on the newest synced data: the
data in force, or a newer sync still training or whose purchase training failed, which is then not in
force (``shared.datasources.service``), so the page can say the data synced before is still in use.
The purchase training on the newest synced data is also given on its own (``purchase_training``): a
young shop's first sync refused for training is in force with no model, and the page says why.

Freshness uses the same rules as every prediction's ``model_info`` (``shared.ml.freshness``): stale
after ``stale_after_days``, retrain after ``retrain_after_days`` or when the drift check measured a
feature's PSI above the threshold. Drift is what the last drift check stored on the model record; a
model never checked says so (``checkedAt`` null) rather than passing.
"""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from pydantic import Field

from shared.ml.freshness import FreshnessRules, freshness
from shared.ml.quality_gate import quality_gate
from shared.predictions.metric_words import MetricWords, explain_metrics
from shared.records.datasources import PUBLISHED_BY, DatasetVersion
from shared.records.models import ModelRecord
from shared.wire_models import CamelModel

_DAY_SECONDS = 86_400.0


class ModelFreshnessView(CamelModel):
    age_days: float = Field(description="Days since the model was trained.")
    stale_after_days: float
    retrain_after_days: float
    is_stale: bool
    recommended_retrain: bool = Field(description="By age, or because a feature drifted.")
    reasons: list[str] = Field(description="One sentence per rule that fired.")


class ModelDriftView(CamelModel):
    checked_at: datetime | None = Field(description="When drift was last measured (null: never).")
    psi_threshold: float
    max_feature_psi: float | None
    drifted: bool | None = Field(
        description="Some feature's PSI is above the threshold (null: not measured)."
    )
    feature_psi: dict[str, float] = Field(description="Each feature's PSI, largest first.")


class ModelTrainingStateView(CamelModel):
    """The training of this model on the newest synced dataset (a sync or retrain in progress, or one
    that failed, shows here)."""

    dataset_version: str = Field(description="The dataset trained on; in force or not (in_force).")
    in_force: bool = Field(description="Whether that dataset is the one in force.")
    state: str
    stage: str | None
    model_version: str | None
    error: str | None
    remedy: str | None = Field(default=None, description="What to do about the failure, when its cause says.")
    refused: bool = Field(
        default=False,
        description="The training refused the data itself (too few orders, a history too short): a retrain "
        "of the same data would refuse it again, so only newer files can train a model.",
    )
    updated_at: datetime


class QualityGateView(CamelModel):
    """What the model beat to be made current (``shared.ml.quality_gate``), in words and figures."""

    passed: bool
    measure: str = Field(description="ROC-AUC (purchase) or NDCG@10 (recommendations).")
    value: float = Field(
        description="The model's figure on its holdout, the latest orders it did not learn from."
    )
    strongest: str = Field(description="The strongest simple method on that holdout, in words.")
    bar: float = Field(description="That method's figure.")
    margin: float = Field(description="value - bar.")
    sentence: str


class WizardUseView(CamelModel):
    """Whether the launch wizard targets with this model, and why (or why not)."""

    used: bool
    reason: str


class DashboardModel(CamelModel):
    name: str
    type: str
    version: str
    algorithm: str
    trained_at: datetime
    training_cutoff: datetime
    dataset_version: str | None = Field(description="The synced dataset it was trained on.")
    horizon_days: int | None
    training_user_count: int
    metrics: dict[str, float]
    metric_words: list[MetricWords] = Field(
        description="Each metric with what it measures in one sentence and a verdict in words."
    )
    quality_gate: QualityGateView | None = Field(
        description="What it beat to be made current (null: trained before the simple methods were recorded)."
    )
    wizard: WizardUseView
    freshness: ModelFreshnessView
    drift: ModelDriftView
    training: ModelTrainingStateView | None = Field(
        description="This model's training on the newest synced dataset, in force or not (null before "
        "any sync)."
    )
    total_predictions: int
    last_prediction_date: datetime | None


class DashboardModelList(CamelModel):
    models: list[DashboardModel]
    current_dataset_version: str | None = Field(
        description="The dataset in force (null before any sync's purchase model is trained)."
    )
    newest_dataset_version: str | None = Field(
        description="The newest synced dataset: the one in force, or a newer one whose training is under "
        "way or failed (then the one in force stays). Null before any sync."
    )
    purchase_training: ModelTrainingStateView | None = Field(
        description="The purchase model's training on the newest synced dataset, which decides whether it "
        "goes in force: with its error and remedy when it refused the data, even before any model exists "
        "(a first sync refused for training is in force all the same). Null before any sync.",
    )


class ModelLister(Protocol):
    def list_for_org(self, org_id: str) -> list[ModelRecord]: ...


class CurrentDataset(Protocol):
    def current(self, org_id: str) -> DatasetVersion | None: ...
    def latest(self, org_id: str) -> DatasetVersion | None: ...


def model_overview(
    org_id: str, *, models: ModelLister, datasets: CurrentDataset, rules: FreshnessRules, now: datetime
) -> DashboardModelList:
    """The organization's models, sorted by name, each with its freshness, drift and training on the
    newest synced dataset."""
    # The newest first: a version published between the reads is then in force in this answer too.
    newest = datasets.latest(org_id)
    current = datasets.current(org_id)
    in_force = current.version if current else None
    return DashboardModelList(
        models=[
            _model(r, newest, in_force, rules, now)
            for r in sorted(models.list_for_org(org_id), key=lambda r: r.name)
        ],
        current_dataset_version=in_force,
        newest_dataset_version=newest.version if newest else None,
        purchase_training=_training_view(newest, PUBLISHED_BY, in_force),
    )


def _model(
    record: ModelRecord,
    newest: DatasetVersion | None,
    in_force: str | None,
    rules: FreshnessRules,
    now: datetime,
) -> DashboardModel:
    status = freshness(record.trained_at, now, {}, None, rules)
    psi = record.max_feature_psi
    drifted = None if psi is None else psi > rules.psi_threshold
    reasons = list(status.reasons)
    if drifted:
        reasons.append(f"a feature drifted (PSI {psi:.2f} > {rules.psi_threshold:g}): retrain")
    return DashboardModel(
        name=record.name,
        type=record.type,
        version=record.version,
        algorithm=record.algorithm,
        trained_at=record.trained_at,
        training_cutoff=record.training_cutoff,
        dataset_version=record.dataset_version,
        horizon_days=record.horizon_days,
        training_user_count=record.training_user_count,
        metrics=record.metrics,
        metric_words=explain_metrics(record.metrics),
        quality_gate=_gate_view(record),
        wizard=wizard_use(record),
        freshness=ModelFreshnessView(
            age_days=round((now - record.trained_at).total_seconds() / _DAY_SECONDS, 2),
            stale_after_days=rules.stale_after_days,
            retrain_after_days=rules.retrain_after_days,
            is_stale=status.is_stale,
            recommended_retrain=status.recommended_retrain or bool(drifted),
            reasons=reasons,
        ),
        drift=ModelDriftView(
            checked_at=record.drift_checked_at,
            psi_threshold=rules.psi_threshold,
            max_feature_psi=psi,
            drifted=drifted,
            feature_psi=dict(sorted((record.feature_psi or {}).items(), key=lambda kv: -kv[1])),
        ),
        training=_training_view(newest, record.type, in_force),
        total_predictions=record.usageStats.total_predictions,
        last_prediction_date=record.last_prediction_date,
    )


def _training_view(
    newest: DatasetVersion | None, model_type: str, in_force: str | None
) -> ModelTrainingStateView | None:
    training = newest.training.get(model_type) if newest else None
    if newest is None or training is None:
        return None
    return ModelTrainingStateView(
        dataset_version=newest.version,
        in_force=newest.version == in_force,
        state=training.state,
        stage=training.stage,
        model_version=training.model_version,
        error=training.error,
        remedy=training.remedy,
        refused=training.refused,
        updated_at=training.updated_at,
    )


def _gate_view(record: ModelRecord) -> QualityGateView | None:
    gate = quality_gate(record.type, record.metrics)
    if gate is None:
        return None
    return QualityGateView(
        passed=gate.passed,
        measure=gate.measure,
        value=gate.value,
        strongest=gate.strongest,
        bar=gate.bar,
        margin=gate.margin,
        sentence=gate.sentence(),
    )


def wizard_use(record: ModelRecord) -> WizardUseView:
    """The launch wizard targets with purchase models trained on the synced data (its audiences are
    that data's customers, with their e-mails and phones); every other model serves the API only."""
    if record.type != "purchase":
        return WizardUseView(
            used=False,
            reason="Not used by the launch wizard: it ranks products for one customer (your shop asks it "
            "for recommendations through the API). An audience needs the reverse, the customers most "
            "likely to buy one product, which a purchase model gives.",
        )
    if record.dataset_version is None:
        return WizardUseView(
            used=False,
            reason="Not used by the launch wizard: it was trained on files given to the training tool, not "
            "on your synced shop data, so the wizard would not know its customers' e-mails and phones. "
            "Your shop can still call it through the API.",
        )
    return WizardUseView(
        used=True,
        reason="Used by the launch wizard: it scores how likely each customer is to buy a product, and "
        "it was trained on your synced shop data, whose customers the audiences are made of.",
    )
