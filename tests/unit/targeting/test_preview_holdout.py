"""The preview counts what the activation's holdout leaves to upload, from a seed it gives back as a
string (issue 23, item 4)."""

from __future__ import annotations

import numpy as np

from shared.audiences.holdout import split_holdout
from shared.datasources.coverage import write_coverage
from shared.ml.scoring import ScoringBundle
from shared.targeting.models import PreviewRequest, PreviewView
from shared.targeting.service import CoverageCache, TargetingService
from tests.unit.records import NOW, RULES, coverage, dataset_version, model_record
from tests.unit.targeting.test_preview_warnings import Blobs, One

BIG_SEED = 2**62 + 1  # past 2^53: a JavaScript number would round it


def preview(scoring: ScoringBundle, usable: list[bool], **request: object) -> PreviewView:
    users = np.sort(scoring.user_ids)
    blobs = Blobs({"identifiers": write_coverage(coverage(users.tolist(), ["GB"] * users.size, usable))})
    service = TargetingService(
        models=One(model_record(training_user_count=300)),  # type: ignore[arg-type]
        datasets=One(dataset_version("v1", keys={"identifiers": "identifiers"})),  # type: ignore[arg-type]
        bundles=One(scoring),  # type: ignore[arg-type]
        coverages=CoverageCache(blobs),
        blobs=blobs,
        rules=RULES,
        clock=lambda: NOW,
    )
    body = {"modelName": "shop-purchase", "productId": "p00001", "rule": "top_n", "value": 100, **request}
    return service.preview("shop", PreviewRequest.model_validate(body))


def test_the_preview_counts_the_upload_after_the_holdout_the_activation_will_make(
    bundle: ScoringBundle,
) -> None:
    # Given: every other customer without a usable identifier, and a seed past 2^53 sent as a string
    usable = [i % 2 == 0 for i in range(bundle.user_ids.size)]

    # When: the top 100 are previewed with a 10 % holdout
    shown = preview(bundle, usable, holdoutSeed=str(BIG_SEED))

    # Then: the seed comes back exactly, as a string, and the counts are those of the split the
    # activation makes from the same users, scores and seed
    assert shown.holdout.seed == str(BIG_SEED)
    scores = bundle.score_all_users("p00001")
    top = np.argsort(-scores, kind="stable")[:100]
    split = split_holdout(bundle.user_ids[top].tolist(), scores[top].tolist(), 10.0, BIG_SEED)
    assert (
        (shown.holdout.held_out, shown.holdout.uploaded)
        == (split.holdout_count, split.uploaded_count)
        == (10, 90)
    )
    flags = dict(zip(np.sort(bundle.user_ids).tolist(), usable, strict=True))
    uploaded_ids = [
        u for u, held in zip(bundle.user_ids[top].tolist(), split.held_out, strict=True) if not held
    ]
    assert shown.holdout.uploaded_usable == sum(flags[u] for u in uploaded_ids)
    assert shown.holdout.uploaded_usable < shown.coverage.usable


def test_without_a_seed_the_preview_picks_one_and_the_same_seed_gives_the_same_counts(
    bundle: ScoringBundle,
) -> None:
    usable = [i % 3 != 0 for i in range(bundle.user_ids.size)]
    first = preview(bundle, usable)
    again = preview(bundle, usable, holdoutSeed=first.holdout.seed)
    assert first.holdout == again.holdout


def test_the_preview_names_the_commonest_countries_of_the_users_to_upload(
    bundle: ScoringBundle,
) -> None:
    # Given: every user usable, all in GB (the fixture's coverage)
    shown = preview(bundle, [True] * bundle.user_ids.size)
    # Then: GB, counted over the uploaded group (after the holdout)
    assert [(c.country, c.users) for c in shown.countries] == [("GB", shown.holdout.uploaded_usable)]
