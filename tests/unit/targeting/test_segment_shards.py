"""A segment's users scored from the model's serving shards, one at a time, are the users the whole
bundle chooses (issue 20: a 5M-user segment cannot load the whole bundle, about 450 bytes a user)."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterator

import numpy as np
import pytest

from shared.ml import scoring
from shared.ml.scoring import ScoringBundle, load_bundle
from shared.ml.trained import TrainingConfig
from shared.ml.training import train_model
from shared.predictions.predict import WholeBundles
from shared.records.models import ModelRecord
from shared.targeting.models import SegmentSpec
from shared.targeting.service import CoverageCache, SegmentColumns, TargetingService
from tests.unit.records import NOW, RULES, dataset_version, model_record
from tests.unit.targeting.test_preview_warnings import Blobs, One
from tools.synthetic import SyntheticConfig, generate_shop


@pytest.fixture(scope="module")
def bundle_bytes() -> bytes:
    shop = generate_shop(SyntheticConfig(n_users=300, n_products=30, seed=3))
    trained = train_model(shop.data, name="shop-purchase", model_type="purchase", config=TrainingConfig())
    return trained.artifacts["bundle"].data


class CountingBlobs(Blobs):
    def __init__(self, objects: dict[str, bytes]) -> None:
        super().__init__(objects)
        self.read: list[str] = []

    def get(self, key: str) -> bytes:
        self.read.append(key)
        return super().get(key)


def stored(bundle_bytes: bytes, monkeypatch: pytest.MonkeyPatch) -> tuple[ModelRecord, CountingBlobs]:
    """The model as training stores it: the whole bundle and its serving shards (four here)."""
    monkeypatch.setattr(scoring, "SHARD_USERS", 80)
    shards = scoring.shard_bundle(bundle_bytes)
    objects = {"models/m1/bundle.npz": bundle_bytes}
    objects |= {f"models/m1/shard-{n:04d}.npz": data for n, data in enumerate(shards)}
    record = model_record(
        bundle_key="models/m1/bundle.npz",
        bundle_sha256=hashlib.sha256(bundle_bytes).hexdigest(),
        bundle_shards=[hashlib.sha256(data).hexdigest() for data in shards],
        bundle_shards_prefix="models/m1/shard-",
    )
    return record, CountingBlobs(objects)


def columns(record: ModelRecord, blobs: CountingBlobs, spec: SegmentSpec, *, shards: bool) -> SegmentColumns:
    bundles = WholeBundles(blobs)
    service = TargetingService(
        models=One(record),  # type: ignore[arg-type]
        datasets=One(dataset_version("v1", keys={"customers": "customers.parquet"})),  # type: ignore[arg-type]
        bundles=bundles,
        coverages=CoverageCache(blobs),
        blobs=blobs,
        rules=RULES,
        clock=lambda: NOW,
        shards=bundles if shards else None,
    )
    return service.segment_columns("shop", spec, values=True)


@pytest.mark.parametrize(
    "spec",
    [
        SegmentSpec(model_name="shop-purchase", product_id="p00001", rule="top_n", value=120),
        SegmentSpec(
            model_name="shop-purchase",
            product_id="p00002",
            rule="top_percent",
            value=30,
            exclude_purchased=True,
        ),
    ],
    ids=["top_n", "top_percent_never_bought"],
)
def test_the_shards_choose_the_users_the_whole_bundle_chooses(
    bundle_bytes: bytes, monkeypatch: pytest.MonkeyPatch, spec: SegmentSpec
) -> None:
    # Given a model stored whole and as four serving shards
    record, blobs = stored(bundle_bytes, monkeypatch)

    # When the segment is chosen from the shards, and from the whole bundle
    sharded = columns(record, blobs, spec, shards=True)
    read_for_shards, blobs.read = blobs.read, []
    whole = columns(record, blobs, spec, shards=False)

    # Then the shards alone were read, and the users, scores and values are the whole bundle's
    assert read_for_shards == [f"models/m1/shard-{n:04d}.npz" for n in range(4)]
    assert blobs.read == ["models/m1/bundle.npz"]
    assert sharded.user_ids.dtype.kind == "S"  # as the shards keep them: a byte a character
    assert sorted(sharded.user_id_list()) == sorted(whole.user_id_list())
    assert sharded.provenance == whole.provenance
    by_user = dict(zip(whole.user_ids.tolist(), whole.scores.tolist(), strict=True))
    # (exactly: the preview, which scores with the whole bundle, ranks and holds out as the launch does)
    assert sharded.scores.tolist() == [by_user[u] for u in sharded.user_id_list()]
    assert sharded.values is not None
    assert whole.values is not None
    values = dict(zip(whole.user_ids.tolist(), whole.values.tolist(), strict=True))
    assert sharded.values == pytest.approx([values[u] for u in sharded.user_id_list()], rel=1e-3)


@pytest.mark.parametrize("shards", [True, False], ids=["shards", "whole_bundle"])
def test_a_segment_of_new_buyers_is_a_share_of_the_users_who_never_bought(
    bundle_bytes: bytes, monkeypatch: pytest.MonkeyPatch, shards: bool
) -> None:
    # Given a product some of the model's users bought, and the best 30 % of those who never did
    record, blobs = stored(bundle_bytes, monkeypatch)
    whole = load_bundle(bundle_bytes)
    bought = dict(zip(whole.user_ids.tolist(), whole.bought_by("p00002").tolist(), strict=True))
    assert 0 < sum(bought.values()) < len(bought)
    spec = SegmentSpec(
        model_name="shop-purchase", product_id="p00002", rule="top_percent", value=30, exclude_purchased=True
    )

    # When the segment is chosen
    chosen = columns(record, blobs, spec, shards=shards)

    # Then no buyer is in it, and it is 30 % of the others
    ids = [user.decode() if isinstance(user, bytes) else user for user in chosen.user_ids.tolist()]
    assert [user for user in ids if bought[user]] == []
    assert len(ids) == math.ceil((len(bought) - sum(bought.values())) * 0.3)


def test_a_shard_whose_checksum_differs_is_refused(
    bundle_bytes: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    record, blobs = stored(bundle_bytes, monkeypatch)
    blobs.objects["models/m1/shard-0002.npz"] = blobs.objects["models/m1/shard-0001.npz"]
    spec = SegmentSpec(model_name="shop-purchase", product_id="p00001", rule="top_n", value=10)
    with pytest.raises(scoring.ServiceError, match="checksum"):
        columns(record, blobs, spec, shards=True)


def test_the_shards_are_read_one_at_a_time(bundle_bytes: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    # The generator loads a shard when the scoring asks for it, so at most one is held at once.
    record, blobs = stored(bundle_bytes, monkeypatch)
    shards: Iterator[ScoringBundle] = WholeBundles(blobs).shards_of(record)
    assert blobs.read == []
    first = next(shards)
    assert blobs.read == ["models/m1/shard-0000.npz"]
    assert isinstance(first, ScoringBundle)
    assert np.asarray(first.user_ids).size < load_bundle(bundle_bytes).user_count
