"""A segment names a product of the shop: a product id the synced products do not hold (a typo, a
product the shop no longer lists) is refused before anything is scored, since a model scores any id
(an unknown one as a new product) and the segment, its audience and its advert would go on for a
product the shop does not sell."""

from __future__ import annotations

import io

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


def test_a_preview_of_a_product_the_shop_does_not_list_is_refused_naming_it(bundle: ScoringBundle) -> None:
    # Given a shop whose synced products are p00000..p00029
    targeting = service(bundle, [f"p{n:05d}" for n in range(30)])
    # When the preview names p00107 (a typo, or a product of another shop)
    request = PreviewRequest.model_validate({**SPEC, "productId": "p00107"})
    with pytest.raises(ValidationFailed) as refused:
        targeting.preview("shop", request)
    # Then it is refused naming the field, the product and what to do
    assert refused.value.field == "productId"
    message = "Product 'p00107' is not in the shop's synced products (30 in dataset v1)."
    assert refused.value.message == message
    assert "Choose a product of the products file" in (refused.value.remedy or "")


def test_a_new_segment_of_a_product_the_shop_does_not_list_is_refused(bundle: ScoringBundle) -> None:
    # Given the same shop, and an activation's segment naming p00107
    targeting = service(bundle, [f"p{n:05d}" for n in range(30)])
    spec = SegmentSpec.model_validate({**SPEC, "productId": "p00107"})
    # When its users are chosen (the activation's SelectUsers step)
    with pytest.raises(ValidationFailed) as refused:
        targeting.segment_columns("shop", spec)
    # Then nothing is scored: the segment's product is named as the activation's field
    assert refused.value.field == "segment.productId"


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
        ([f"p{n:05d}" for n in range(30)], "p00007"),
        ([*(f"p{n:05d}" for n in range(30)), "p-new"], "p-new"),
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
