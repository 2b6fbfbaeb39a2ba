"""A segment names a product of the shop: a product id the synced products do not hold (a typo, a
product the shop no longer lists) is refused before anything is scored, since a model scores any id
(an unknown one as a new product) and the segment, its audience and its advert would go on for a
product the shop does not sell."""

from __future__ import annotations

import io
from collections.abc import Callable

import numpy as np
import pytest

from shared.datasources.coverage import write_coverage
from shared.errors import ValidationFailed
from shared.ml.scoring import ScoringBundle
from shared.targeting.models import PreviewRequest, SegmentSpec
from shared.targeting.service import CoverageCache, TargetingService
from tests.unit.records import NOW, RULES, coverage, dataset_version, model_record
from tests.unit.targeting.test_preview_warnings import Blobs, One

SPEC = {"modelName": "shop-purchase", "rule": "top_percent", "value": 50}
THIRTY = [f"p{n:05d}" for n in range(30)]  # the shop's synced products


def catalog(product_ids: list[str]) -> bytes:
    """A ``catalog.npz`` as the sync writes it (``shared.datasources.sync.write_catalog``)."""
    ids = np.array(sorted(product_ids), dtype=np.str_)
    blank = np.full(ids.size, "", dtype=np.str_)
    out = io.BytesIO()
    np.savez_compressed(out, allow_pickle=False, product_ids=ids, names=blank, categories=blank)
    return out.getvalue()


def service(bundle: ScoringBundle, products: list[str] | None) -> TargetingService:
    """Targeting for a shop whose dataset in force synced ``products`` (None: a version stored before
    its catalog was kept)."""
    users = np.sort(bundle.user_ids)
    objects = {
        "identifiers": write_coverage(coverage(users.tolist(), ["GB"] * users.size, [True] * users.size)),
        "customers": b"user_id,email\n",
    }
    keys = {"identifiers": "identifiers", "customers": "customers"}
    if products is not None:
        objects["catalog"], keys["catalog"] = catalog(products), "catalog"
    blobs = Blobs(objects)
    return TargetingService(
        models=One(model_record(training_user_count=300, dataset_version="v1")),  # type: ignore[arg-type]
        datasets=One(dataset_version("v1", keys=keys)),  # type: ignore[arg-type]
        bundles=One(bundle),  # type: ignore[arg-type]
        coverages=CoverageCache(blobs),
        blobs=blobs,
        rules=RULES,
        clock=lambda: NOW,
    )


def preview(targeting: TargetingService, product: str) -> object:
    """The targeting page's live preview of the top half of the shop's users for ``product``."""
    return targeting.preview("shop", PreviewRequest.model_validate({**SPEC, "productId": product}))


def new_segment(targeting: TargetingService, product: str) -> object:
    """The users an activation's new segment of ``product`` chooses (its SelectUsers step)."""
    return targeting.segment_columns("shop", SegmentSpec.model_validate({**SPEC, "productId": product}))


@pytest.mark.parametrize(
    ("ask", "field"),
    [(preview, "productId"), (new_segment, "segment.productId")],
    ids=["a preview", "a new segment"],
)
def test_a_product_the_shop_does_not_list_is_refused_naming_the_field_the_product_and_what_to_do(
    bundle: ScoringBundle, ask: Callable[[TargetingService, str], object], field: str
) -> None:
    # Given a shop whose synced products are p00000..p00029
    targeting = service(bundle, THIRTY)
    # When a preview, or a new segment, names p00107 (a typo, or a product of another shop)
    with pytest.raises(ValidationFailed) as refused:
        ask(targeting, "p00107")
    # Then it is refused naming the request's field, the product and what to do
    assert refused.value.field == field
    message = "Product 'p00107' is not in the shop's synced products (30 in dataset v1)."
    assert refused.value.message == message
    assert "Choose a product of the products file" in (refused.value.remedy or "")


def test_an_audience_sync_goes_on_scoring_its_product(bundle: ScoringBundle) -> None:
    # Given an audience of p00029, and a shop whose latest sync no longer lists it
    targeting = service(bundle, [f"p{n:05d}" for n in range(29)])
    spec = SegmentSpec.model_validate({**SPEC, "productId": "p00029"})
    # When its daily sync scores it with the latest identifiers
    columns = targeting.segment_columns("shop", spec, latest_identifiers=True)
    # Then the audience is refreshed as it was made (its advert is the merchant's to stop)
    assert columns.user_ids.size == 150


@pytest.mark.parametrize(
    ("products", "product"),
    [
        (THIRTY, "p00007"),
        ([*THIRTY, "p-new"], "p-new"),
        (None, "p00107"),
    ],
    ids=["a product the shop sold", "a listed product never sold yet", "a version without a catalog"],
)
def test_a_listed_product_is_previewed(
    bundle: ScoringBundle, products: list[str] | None, product: str
) -> None:
    # Given a product the shop lists (or a version stored before the catalog was kept: not checked)
    targeting = service(bundle, products)
    # When it is previewed
    view = targeting.preview("shop", PreviewRequest.model_validate({**SPEC, "productId": product}))
    # Then every training user is scored for it, the top half kept
    assert (view.scored_users, view.size) == (300, 150)
