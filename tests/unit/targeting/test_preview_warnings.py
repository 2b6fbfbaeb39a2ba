"""The preview warns when the model should be retrained: by its age, and by the drift its drift check
measured (as predict's recommended_retrain does)."""

from __future__ import annotations

import numpy as np

from shared.datasources.coverage import write_coverage
from shared.ml.scoring import ScoringBundle
from shared.targeting.models import PreviewRequest
from shared.targeting.service import CoverageCache, TargetingService
from tests.unit.records import NOW, RULES, coverage, dataset_version, model_record


class Blobs:
    def __init__(self, objects: dict[str, bytes]) -> None:
        self.objects = objects

    def get(self, key: str) -> bytes:
        return self.objects[key]


class One:
    def __init__(self, value: object) -> None:
        self.value = value

    def get(self, *_: str) -> object:
        return self.value

    def current(self, *_: str) -> object:
        return self.value

    def bundle_for(self, *_: object) -> object:
        return self.value


def preview(bundle: ScoringBundle, **changes: object) -> list[str]:
    record = model_record(training_user_count=300, **changes)
    dataset = dataset_version("v1", keys={"identifiers": "identifiers"})
    users = np.sort(bundle.user_ids)
    covered = coverage(users.tolist(), ["GB"] * users.size, [True] * users.size)
    blobs = Blobs({"identifiers": write_coverage(covered)})
    service = TargetingService(
        models=One(record),  # type: ignore[arg-type]
        datasets=One(dataset),  # type: ignore[arg-type]
        bundles=One(bundle),  # type: ignore[arg-type]
        coverages=CoverageCache(blobs),
        blobs=blobs,
        rules=RULES,
        clock=lambda: NOW,
    )
    request = PreviewRequest.model_validate(
        {"modelName": "shop-purchase", "productId": "p00001", "rule": "top_percent", "value": 50}
    )
    return [f"{w.code}: {w.message}" for w in service.preview("shop", request).warnings]


def test_a_fresh_model_without_drift_gets_no_retrain_warning(bundle: ScoringBundle) -> None:
    assert not [w for w in preview(bundle) if w.startswith(("model_retrain", "model_stale"))]


def test_a_drifted_model_gets_the_retrain_warning_with_its_measurement(bundle: ScoringBundle) -> None:
    warnings = preview(bundle, max_feature_psi=0.31)
    assert [w for w in warnings if w.startswith("model_retrain")] == [
        "model_retrain: a feature drifted since training (PSI 0.31 > 0.2)"
    ]
