"""Records as the services read them, for unit tests: a trained model's record, a synced dataset
version and the identifier coverage of its customers, each with the fields a test does not care
about filled in, and what it does care about passed as changes."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import numpy as np

from shared.datasources.coverage import FLAGS, Coverage
from shared.ml.freshness import FreshnessRules
from shared.records.datasources import DatasetVersion
from shared.records.models import ModelRecord

NOW = datetime(2026, 11, 23, 12, tzinfo=UTC)
RULES = FreshnessRules(stale_after_days=30, retrain_after_days=60, psi_threshold=0.2)


def model_record(**changes: object) -> ModelRecord:
    """``shop``'s purchase model, version m1, trained a day before ``NOW`` on dataset v1."""
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
        "dataset_version": "v1",
    }
    return ModelRecord.model_validate({**fields, **changes})


def dataset_version(version: str = "v1", keys: dict[str, str] | None = None) -> DatasetVersion:
    """``shop``'s dataset ``version``, synced at ``NOW`` with nothing rejected; ``keys`` name its files."""
    return DatasetVersion(
        org_id="shop",
        version=version,
        created_at=NOW,
        keys=keys or {},
        row_counts={},
        rows_read={},
        rejected_count=0,
        rejected_rows_accepted=False,
    )


def coverage(user_ids: Sequence[str], countries: Sequence[str], usable: Sequence[bool]) -> Coverage:
    """The coverage of ``user_ids`` (sorted, as the coverage file keeps them), each in its country,
    with every identifier flag ``usable`` or not."""
    flags = np.array(usable, dtype=bool)
    return Coverage(
        user_ids=np.array(user_ids),
        countries=np.array(countries, dtype="<U2"),
        flags={name: flags.copy() for name in FLAGS},
    )
