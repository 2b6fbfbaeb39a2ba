"""Targeting preview, and the users of a segment for an audience.

The preview scores every training user for the product on the numpy bundle (no scikit-learn in the
request path), cuts by the rule, and joins the segment to the synced customers' identifier coverage
(:mod:`shared.datasources.coverage`). The join from the bundle's users to the coverage rows is built
once per (model version, dataset version) and kept by :class:`CoverageCache`, so a warm preview is
scoring, one selection and integer indexing.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from threading import Lock
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from shared.audiences.holdout import new_seed, split_holdout
from shared.audiences.identifiers import AudienceUser
from shared.clock import Clock
from shared.datasources.catalog import read_catalog
from shared.datasources.coverage import Coverage, read_coverage
from shared.errors import NotFound, PreconditionFailed, ValidationFailed
from shared.ml.datasets import CustomerRecord, load_records
from shared.ml.freshness import FreshnessRules, freshness
from shared.ml.scoring import ScoringBundle, score_shards
from shared.records.audiences import SegmentProvenance
from shared.records.datasources import DatasetVersion
from shared.records.models import ModelRecord
from shared.targeting.models import (
    MIN_SEED_USERS,
    CountryCount,
    CoverageView,
    HistogramView,
    HoldoutPreview,
    PreviewRequest,
    PreviewView,
    SeedView,
    SegmentSpec,
    TargetingWarning,
)
from shared.targeting.segments import Cut, histogram, select
from shared.targeting.values import predicted_values, shop_average_order_value

_CACHED_DATASETS = 4


class ModelReader(Protocol):
    def get(self, org_id: str, name: str) -> ModelRecord | None: ...


class DatasetReader(Protocol):
    def current(self, org_id: str) -> DatasetVersion | None: ...
    def get(self, org_id: str, version: str) -> DatasetVersion | None: ...


class BundleSource(Protocol):
    def bundle_for(self, record: ModelRecord) -> ScoringBundle: ...


class ShardSource(Protocol):
    def shards_of(self, record: ModelRecord) -> Iterator[ScoringBundle]:
        """Each serving shard of ``record`` loaded in turn, none kept (``record.bundle_shards``)."""
        ...


class BlobReader(Protocol):
    def get(self, key: str) -> bytes: ...


class CoverageCache:
    """Identifier coverage per dataset version, each model's join to it, and the version's product
    ids, kept per container (a version's files never change)."""

    def __init__(self, blobs: BlobReader, size: int = _CACHED_DATASETS) -> None:
        self._blobs = blobs
        self._size = size
        self._coverages: OrderedDict[str, Coverage] = OrderedDict()
        self._joins: OrderedDict[tuple[str, str], NDArray[np.int64]] = OrderedDict()
        self._products: OrderedDict[str, NDArray[np.str_]] = OrderedDict()
        self._lock = Lock()

    def product_ids(self, dataset: DatasetVersion) -> NDArray[np.str_] | None:
        """The ids of the products the version synced (its ``catalog.npz``), or None for a version
        stored before its catalog was kept."""
        key = dataset.keys.get("catalog")
        if key is None:
            return None
        with self._lock:
            found = self._products.get(key)
        if found is None:
            found = read_catalog(self._blobs.get(key)).product_ids
            self._remember(self._products, key, found)
        return found

    def coverage(self, dataset: DatasetVersion) -> Coverage:
        key = dataset.keys["identifiers"]
        with self._lock:
            found = self._coverages.get(key)
        if found is None:
            found = read_coverage(self._blobs.get(key))
            self._remember(self._coverages, key, found)
        return found

    def positions(
        self, model: ModelRecord, bundle: ScoringBundle, dataset: DatasetVersion
    ) -> NDArray[np.int64]:
        """For each of the bundle's users, its row in the dataset's coverage (-1: no customer row)."""
        key = (model.bundle_sha256, dataset.keys["identifiers"])
        with self._lock:
            found = self._joins.get(key)
        if found is None:
            found = self.coverage(dataset).positions(bundle.user_ids)
            self._remember(self._joins, key, found)
        return found

    def _remember[K, V](self, cache: OrderedDict[K, V], key: K, value: V) -> None:
        with self._lock:
            cache[key] = value
            cache.move_to_end(key)
            while len(cache) > self._size:
                cache.popitem(last=False)


@dataclass(frozen=True)
class SegmentUsers:
    """The users of a segment with their identifiers and scores, and where they came from; with
    ``values`` asked for, each user's predicted value by user_id (``shared.targeting.values``)."""

    users: list[AudienceUser]
    provenance: SegmentProvenance
    values: dict[str, float] | None = None


@dataclass(frozen=True)
class SegmentColumns:
    """The users a segment's rule chose, as columns in the bundle's order (sorted by user_id): their
    ids, scores and, when asked for, predicted values (``shared.targeting.values``); the dataset
    version's customers file (``customers_key``) to join them to; and where they came from
    (``provenance.users_without_customer_row`` is counted by whoever joins them). For a caller that
    must not hold one object per user (a segment activation of millions, ``shared.activation``)."""

    # str, or ASCII bytes as the serving shards keep them (a byte a character, not numpy's four:
    # 5M ids of 30 characters are 150 MB, not 600 MB); ``user_id_list`` or ``decoded`` read them.
    user_ids: NDArray[Any]
    scores: NDArray[np.float64]
    values: NDArray[np.float64] | None
    customers_key: str
    provenance: SegmentProvenance

    def user_id_list(self) -> list[str]:
        """The ids as Python strings (a segment of the demo's size: one object a user)."""
        return decoded(self.user_ids).tolist()


def decoded(ids: NDArray[Any]) -> NDArray[np.str_]:
    """User ids as a numpy str array, from str or from bytes (UTF-8)."""
    return np.char.decode(ids, "utf-8") if ids.dtype.kind == "S" else np.asarray(ids, dtype=np.str_)


@dataclass(frozen=True)
class TargetingService:
    models: ModelReader
    datasets: DatasetReader
    bundles: BundleSource
    coverages: CoverageCache
    blobs: BlobReader
    rules: FreshnessRules
    clock: Clock
    # Where set, a segment's users are scored from the model's serving shards, one at a time
    # (``segment_columns``), never from the whole bundle.
    shards: ShardSource | None = None

    def preview(self, org_id: str, request: PreviewRequest) -> PreviewView:
        """Size, score histogram and cut, identifier coverage, seed per country, and warnings.
        ``ValidationFailed`` (field ``productId``) for a product the shop's synced products do not
        hold (:meth:`check_product`)."""
        model, bundle, dataset = self._sources(org_id, request)
        self.check_product(org_id, request.product_id, field="productId")
        scores = _comparable(bundle.score_all_users(request.product_id))
        cut = _cut(scores, request, _bought(bundle, request))
        rows = self.coverages.positions(model, bundle, dataset)[cut.indices]
        coverage = self.coverages.coverage(dataset)
        view = _coverage_view(coverage, rows)
        holdout, uploaded_rows = _holdout_preview(bundle, scores, cut, rows, coverage, request)
        seed = None
        if request.objective == "prospecting" and request.lookalike_country:
            # The lookalike's seed is the uploaded group: the holdout's users are not in it.
            in_country = int(
                np.count_nonzero(
                    coverage.flags["usable"][uploaded_rows]
                    & (coverage.countries[uploaded_rows] == request.lookalike_country)
                )
            )
            seed = SeedView(
                country=request.lookalike_country,
                usable_in_country=in_country,
                reached=in_country >= MIN_SEED_USERS,
            )
        bins = histogram(scores, cut.indices, probabilities=bundle.model_type == "purchase")
        return PreviewView(
            model_name=model.name,
            model_version=model.version,
            dataset_version=dataset.version,
            product_id=request.product_id,
            rule=request.rule,
            value=request.value,
            scored_users=int(scores.size),
            size=int(cut.indices.size),
            cut_score=cut.cut_score,
            cut_rank=int(cut.indices.size),
            histogram=HistogramView(edges=bins.edges, all_users=bins.all_users, segment=bins.segment),
            coverage=view,
            holdout=holdout,
            countries=_top_countries(coverage, uploaded_rows),
            seed=seed,
            warnings=self._warnings(org_id, model, dataset, cut, view, seed),
        )

    def users_for(
        self, org_id: str, spec: SegmentSpec, *, latest_identifiers: bool = False, values: bool = False
    ) -> SegmentUsers:
        """The segment's users, best first, joined to their identifiers in the synced customers file
        (users without a customer row are left out and counted).

        The identifiers come from the dataset the model was trained on, or with ``latest_identifiers``
        from the dataset in force (an audience sync: people's current e-mails and phones). With
        ``values``, each user's predicted value too (``shared.targeting.values``; purchase models only,
        else ``ValidationFailed``)."""
        columns = self.segment_columns(org_id, spec, latest_identifiers=latest_identifiers, values=values)
        ids = columns.user_id_list()
        chosen = dict(zip(ids, columns.scores.tolist(), strict=True))
        predicted: dict[str, float] | None = None
        if columns.values is not None:
            predicted = dict(zip(ids, columns.values.tolist(), strict=True))
        users = self._customers(columns.customers_key, ids, chosen)
        users.sort(key=lambda user: -(user.score or 0.0))
        if not users and latest_identifiers and chosen:
            # A sync joins the model's users to the data in force: a customers file synced since that
            # lists none of them (the model did not retrain on it) leaves nothing no segment could fix.
            raise PreconditionFailed(
                f"None of the segment's {len(chosen)} users has a row in the customers file of the data in "
                f"force ({columns.provenance.dataset_version}): the model in service was trained on other "
                "customers.",
                field="segment",
                remedy=(
                    "Sync your full customers file again (with the orders, so the model retrains on it); "
                    "the audience keeps its members meanwhile."
                ),
            )
        if not users:
            raise PreconditionFailed(
                "The segment has no user with a customer row to upload.",
                field="segment",
                remedy="Widen the segment (a larger N or percentage, a lower threshold); preview it first.",
            )
        return SegmentUsers(
            users=users,
            provenance=columns.provenance.model_copy(
                update={"users_without_customer_row": len(chosen) - len(users)}
            ),
            values=None if predicted is None else {user.user_id: predicted[user.user_id] for user in users},
        )

    def segment_columns(
        self, org_id: str, spec: SegmentSpec, *, latest_identifiers: bool = False, values: bool = False
    ) -> SegmentColumns:
        """The segment's users as columns (:class:`SegmentColumns`), with the customers file to join
        them to: of the dataset the model was trained on, or with ``latest_identifiers`` of the dataset
        in force. With ``values``, each user's predicted value too (purchase models only, else
        ``ValidationFailed``). Scored from the model's serving shards one at a time where this service
        has ``shards`` and the model has them (``score_shards``: about 25 bytes a user stay, not the
        bundle's 450), else by the whole bundle ``_CHUNK_ROWS`` users at a time.

        A new segment (not ``latest_identifiers``) of a product the shop's synced products do not hold
        is refused (:meth:`check_product`); an audience's sync (``latest_identifiers``) goes on
        scoring its product as the audience was made."""
        model, dataset = self._model_and_dataset(org_id, spec)
        if latest_identifiers:
            dataset = self.datasets.current(org_id) or dataset
        else:
            self.check_product(org_id, spec.product_id, field="segment.productId")
        if values and model.type != "purchase":
            raise ValidationFailed(
                f"Model '{model.name}' ranks products for each user; it predicts no purchase probability, "
                "so there is no predicted value for a value-based seed.",
                field="segment.modelName",
                remedy="Use a purchase model (shop-purchase) for a value-based seed, or leave valueBased "
                "out.",
            )
        if self.shards is not None and model.bundle_shards and model.bundle_shards_prefix:
            scored = score_shards(
                self.shards.shards_of(model), spec.product_id, bought=spec.exclude_purchased, values=values
            )
            user_ids, scores, bought = scored.user_ids, scored.scores, scored.bought
            spend, orders = scored.spend, scored.orders
            del scored
        else:
            bundle = self.bundles.bundle_for(model)
            user_ids, scores = bundle.user_ids, bundle.score_all_users(spec.product_id)
            bought = _bought(bundle, spec)
            spend, orders = bundle.spend_and_orders() if values else (None, None)
            del bundle
        scores = _comparable(scores)
        cut = _cut(scores, spec, bought)
        predicted: NDArray[np.float64] | None = None
        if spend is not None and orders is not None:
            predicted = predicted_values(
                scores[cut.indices],
                spend[cut.indices],
                orders[cut.indices],
                shop_average_order_value(spend, orders),  # every training user, not only the kept
            )
        chosen = user_ids[cut.indices]
        del user_ids
        return SegmentColumns(
            user_ids=chosen,
            scores=scores[cut.indices],
            values=predicted,
            customers_key=dataset.keys["customers"],
            provenance=SegmentProvenance(
                model_name=model.name,
                model_version=model.version,
                dataset_version=dataset.version,
                product_id=spec.product_id,
                rule=spec.rule,
                value=spec.value,
                users_selected=int(cut.indices.size),
                users_without_customer_row=0,
                exclude_purchased=spec.exclude_purchased,
            ),
        )

    def check_product(self, org_id: str, product_id: str, *, field: str) -> None:
        """Refuse (``ValidationFailed`` naming ``field``) a product that is not among the products of
        the dataset in force: a mistyped id, or a product the shop no longer lists. A model scores
        any product id (an unknown one as a new product with no sales), so without this a typo made a
        segment, an audience and an advert for a product the shop does not sell. A product listed
        but never sold passes (a new product's launch). A version stored before its catalog was kept
        is not checked."""
        current = self.datasets.current(org_id)
        known = self.coverages.product_ids(current) if current is not None else None
        if current is None or known is None or bool(np.any(known == product_id)):
            return
        raise ValidationFailed(
            f"Product '{product_id}' is not in the shop's synced products ({known.size:,} in dataset "
            f"{current.version}).",
            field=field,
            remedy="Choose a product of the products file (Targeting searches it by name or id), or "
            "sync a products file that lists this one.",
        )

    def _sources(self, org_id: str, spec: SegmentSpec) -> tuple[ModelRecord, ScoringBundle, DatasetVersion]:
        model, dataset = self._model_and_dataset(org_id, spec)
        return model, self.bundles.bundle_for(model), dataset

    def _model_and_dataset(self, org_id: str, spec: SegmentSpec) -> tuple[ModelRecord, DatasetVersion]:
        model = self.models.get(org_id, spec.model_name)
        if model is None:
            raise NotFound(
                f"Model '{spec.model_name}' was not found.",
                field="modelName",
                remedy="Sync a data source (it trains shop-purchase and shop-recommendations).",
            )
        dataset = (
            self.datasets.get(org_id, model.dataset_version)
            if model.dataset_version
            else self.datasets.current(org_id)
        )
        if dataset is None:
            raise PreconditionFailed(
                "No synced data source holds the customers' identifiers.",
                field="modelName",
                remedy="Upload and sync the shop's customers, products and orders in the launch wizard's "
                "first step.",
            )
        return model, dataset

    def _customers(self, key: str, ids: list[str], chosen: dict[str, float]) -> list[AudienceUser]:
        """The chosen users that have a customer row, with their identifiers and scores, by user_id:
        from ``customers.parquet`` through the engine (only the segment's rows leave it), or, for a
        version synced before the engine, from its customers CSV file (``key``)."""
        if key.endswith(".parquet"):
            from shared.dataplane.customers import segment_customers  # the engine: its own layer

            found = segment_customers(self.blobs.get(key), np.array(ids, dtype=np.str_))
            return [
                AudienceUser(**dict(zip(found, row, strict=True)), score=chosen[row[0]])
                for row in zip(*found.values(), strict=True)
            ]
        customers = load_records(self.blobs.get(key), CustomerRecord, file_name=key.rsplit("/", 1)[-1])
        return [
            AudienceUser(
                user_id=c.user_id,
                email=c.email,
                first_name=c.first_name,
                last_name=c.last_name,
                phone=c.phone,
                country=c.country,
                limited_data_use=c.limited_data_use,
                state=c.state,
                city=c.city,
                postcode=c.postcode,
                date_of_birth=c.date_of_birth,
                gender=c.gender,
                external_id=c.external_id,
                madid=c.madid,
                score=chosen[c.user_id],
            )
            for c in customers
            if c.user_id in chosen
        ]

    def _warnings(
        self,
        org_id: str,
        model: ModelRecord,
        dataset: DatasetVersion,
        cut: Cut,
        coverage: CoverageView,
        seed: SeedView | None,
    ) -> list[TargetingWarning]:
        warnings = []
        now: datetime = self.clock()
        status = freshness(model.trained_at, now, {}, None, self.rules)
        reasons = list(status.reasons)
        # A drift above the threshold (stored by the drift check) calls for retraining, as predict says.
        psi = model.max_feature_psi
        drifted = psi is not None and psi > self.rules.psi_threshold
        if drifted:
            reasons.append(f"a feature drifted since training (PSI {psi:.2f} > {self.rules.psi_threshold:g})")
        if status.recommended_retrain or drifted:
            warnings.append(TargetingWarning(code="model_retrain", message="; ".join(reasons)))
        elif status.is_stale:
            warnings.append(TargetingWarning(code="model_stale", message="; ".join(status.reasons)))
        current = self.datasets.current(org_id)
        if current is not None and current.version != dataset.version:
            warnings.append(
                TargetingWarning(
                    code="model_outdated",
                    message=f"The model was trained on dataset {dataset.version}; {current.version} is "
                    "newer, and its training is not finished: the Models page shows its progress.",
                )
            )
        if cut.indices.size == 0 or coverage.usable == 0:
            warnings.append(
                TargetingWarning(
                    code="segment_empty", message="No user of the segment has a usable e-mail or phone."
                )
            )
        if seed is not None and not seed.reached:
            warnings.append(
                TargetingWarning(
                    code="seed_too_small",
                    message=f"{seed.usable_in_country} usable users in {seed.country}; a lookalike seed "
                    f"needs at least {MIN_SEED_USERS} there. Widen the segment or choose another country.",
                )
            )
        return warnings


def _bought(bundle: ScoringBundle, spec: SegmentSpec) -> NDArray[np.bool_] | None:
    """Whether each of ``bundle``'s users bought ``spec``'s product, where ``spec`` leaves buyers out
    (``exclude_purchased``); None where it keeps everyone."""
    return bundle.bought_by(spec.product_id) if spec.exclude_purchased else None


def _comparable(scores: NDArray[np.float64]) -> NDArray[np.float64]:
    """Scores as the segment's rule and the holdout compare them: rounded to float32, the precision of
    the state they are computed from (``shared.ml.scoring``: the whole bundle at its shards'
    precision). The preview scores with the whole bundle and the launch with the shards, whose float64
    arithmetic differs in the last bits for users of other shards; rounded, their ties and order are
    the same, so the launch cuts, holds out and uploads the users the preview counted."""
    return scores.astype(np.float32).astype(np.float64)


def _cut(scores: NDArray[np.float64], spec: SegmentSpec, bought: NDArray[np.bool_] | None) -> Cut:
    """The users ``spec``'s rule keeps of ``scores`` (indices into them, best first). Given ``bought``
    (whether each user bought the product: the spec leaves buyers out), the rule runs on the users who
    never bought it alone (a top percentage is a share of them); None: on every user."""
    if bought is None:
        return select(scores, spec)
    among = np.flatnonzero(~bought)
    cut = select(scores[among], spec)
    return Cut(indices=among[cut.indices], cut_score=cut.cut_score)


def _holdout_preview(
    bundle: ScoringBundle,
    scores: NDArray[np.float64],
    cut: Cut,
    rows: NDArray[np.int64],
    coverage: Coverage,
    request: PreviewRequest,
) -> tuple[HoldoutPreview, NDArray[np.int64]]:
    """The split the activation will make with this share and seed, over the same users (the segment's
    users with a customer row) and scores (``shared.audiences.holdout``), and the coverage rows of the
    users it uploads."""
    known = rows >= 0
    seed = new_seed() if request.holdout_seed is None else request.holdout_seed
    split = split_holdout(
        bundle.user_ids[cut.indices][known].tolist(),
        scores[cut.indices][known].tolist(),
        request.holdout_percent,
        seed,
    )
    uploaded_rows = rows[known][~np.array(split.held_out, dtype=bool)]
    preview = HoldoutPreview(
        percent=request.holdout_percent,
        seed=str(seed),
        held_out=split.holdout_count,
        uploaded=split.uploaded_count,
        uploaded_usable=int(np.count_nonzero(coverage.flags["usable"][uploaded_rows])),
    )
    return preview, uploaded_rows


def _top_countries(coverage: Coverage, rows: NDArray[np.int64], most: int = 5) -> list[CountryCount]:
    """The commonest countries of the usable users among ``rows`` (coverage rows), most first."""
    usable = rows[coverage.flags["usable"][rows]]
    names, counts = np.unique(coverage.countries[usable], return_counts=True)
    known = names != ""
    names, counts = names[known], counts[known]
    order = np.lexsort((names, -counts))[:most]
    return [CountryCount(country=str(names[i]), users=int(counts[i])) for i in order]


def _coverage_view(coverage: Coverage, rows: NDArray[np.int64]) -> CoverageView:
    known = rows[rows >= 0]
    counts = {name: int(np.count_nonzero(flags[known])) for name, flags in coverage.flags.items()}
    return CoverageView(
        without_customer_row=int(rows.size - known.size),
        email=counts["has_email"],
        phone=counts["has_phone"],
        name=counts["has_name"],
        usable_email=counts["usable_email"],
        usable_phone=counts["usable_phone"],
        usable_name=counts["usable_name"],
        usable=counts["usable"],
    )
