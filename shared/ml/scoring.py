"""The compact scoring bundle: everything needed to predict, in numpy arrays, with numpy only.

Lambda cold starts pay for every import, and scikit-learn plus scipy add a large layer and seconds of
import time. At training time the fitted model is flattened into plain arrays and saved with
``np.savez`` (no pickle, loaded with ``allow_pickle=False``, so a bundle cannot execute code); the
prediction path imports this module, :mod:`shared.ml.features` and numpy, nothing else.

Bundle layout (one ``.npz``): ``header`` (UTF-8 JSON as ``uint8``: format, model type, algorithm,
feature order, category names, as-of day), ``user_ids``/``product_ids`` (sorted, so a lookup is a
binary search and loading needs no dict), ``state__*`` (the :class:`~shared.ml.features.FeatureState`
as of the end of the training data), ``fallbacks``, and ``model__*``:

* ``logistic``: ``log_mask``, scaler ``mean``/``scale``, ``coef``, ``intercept``.
* ``two_part``: the same logistic regression (the product part: which products, given that the customer
  orders) times the buyer part (does the customer order at all in the horizon, from the
  :data:`~shared.ml.features.CUSTOMER_FEATURES`; header ``buyer_model``): ``buyer_*`` arrays, a
  logistic regression's as above or a gradient boosting's trees (``buyer_tree_*``, walked by
  :func:`buyer_logit`), ``user_buyer_logit``, every user's buyer logit as of the bundle's end, so
  that scoring a product for every user never walks the trees, and ``calibration`` (Platt scaling of
  the product of the parts, fitted on the holdout; :func:`calibrated`).
* ``recommendation`` (``taste_blend``): ``item_factors``, ``taste``, ``popularity``,
  ``product_category``, ``category_share``, user histories as CSR (``history_indptr``/``_items``/
  ``_weights``, the repeat parts' ``_orders``/``_days_since``/``_orders_since`` and ``_repeat``, the
  repeat model's probability of each entry as of the bundle's end) and ``user_taste_norm``, with the
  blend's parts and weights in the header; a bundle of
  the earlier ``svd_blend`` (popularity and owned weights in the header) still scores as it did.

Nothing in a bundle is users x products. Scoring one product for every user
(:meth:`ScoringBundle.score_all_users`, or :meth:`ScoringBundle.iter_user_scores` in bounded chunks) is
a pass over per-user arrays and the histories' entries.

Extra request features override the computed ones by name, aligned to the trained order; unknown names
are ignored (see :meth:`ScoringBundle.ignored_features`) and a non-finite value gets the feature's
fallback (0 for counts, 730 days for recencies, the training median price; see ``features``).
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from shared.errors import NotFound, ServiceError
from shared.ml.features import (
    CUSTOMER_FEATURES,
    USER_ONLY_FEATURES,
    FeatureState,
    log1p_columns,
    pair_features,
    product_features,
)

BUNDLE_FORMAT = 1
# Users per shard of the serving layout (see ``shard_bundle``): a shard of a purchase model is about
# 1 MB, so a cold start reads the same few bytes whether the shop has 2,000 users or 1M.
SHARD_USERS = 16_384
# Artifact roles of the shards of a trained model (``shard-0000``, ...).
SHARD_ROLE_PREFIX = "shard-"
# Unit-length taste factors: half precision is plenty (a dot product of two of them is a similarity).
_HALF_PRECISION = frozenset({"state__user_taste", "state__product_taste"})
# Arrays keyed by ``row * n_users + user`` and the value arrays aligned with them.
_USER_KEYED = {
    "state__pair_keys": ("state__pair_units", "state__pair_days_since_last"),
    "state__category_keys": ("state__category_units_total", "state__category_units_90d"),
}
# Rows scored per vectorised step: bounds memory on 1M-user scoring.
_CHUNK_ROWS = 65_536


@dataclass(frozen=True)
class Prediction:
    """One scored item for the response: ``product_id``, ``score`` and a human-readable ``reason``."""

    product_id: str
    score: float
    reason: str


def write_bundle(
    header: Mapping[str, Any], arrays: Mapping[str, np.ndarray], *, compress: bool = False
) -> bytes:
    """Serialise a bundle (a JSON-able ``header`` and named numpy arrays) to ``.npz`` bytes
    (deflated when ``compress``: the serving shards, read once per container)."""
    buffer = io.BytesIO()
    encoded = np.frombuffer(json.dumps({"format": BUNDLE_FORMAT, **header}).encode(), dtype=np.uint8)
    save = np.savez_compressed if compress else np.savez
    save(buffer, allow_pickle=False, header=encoded, **dict(arrays))
    return buffer.getvalue()


def shard_count(n_users: int) -> int:
    """How many shards the serving layout of a model with ``n_users`` users has."""
    return max(1, math.ceil(n_users / SHARD_USERS))


def shard_of(user_id: str, shards: int) -> int:
    """The shard holding ``user_id`` (CRC-32 of its UTF-8 bytes: stable across processes)."""
    return zlib.crc32(user_id.encode()) % shards


def shard_bundle(data: bytes) -> list[bytes]:
    """The serving layout of a bundle: ``shard_count`` self-contained, compact bundles, shard ``s``
    holding the users with ``shard_of(user) == s`` and every product.

    Each shard scores its users exactly as the whole bundle does (same arrays, restricted and
    re-keyed to its users), so the predict function loads only the shard of the user it is asked
    about. Compact: per-user and per-pair state as float32, ids as bytes when ASCII, keys and indices
    in the smallest integer type that holds them.
    """
    with np.load(io.BytesIO(data), allow_pickle=False) as npz:
        arrays = {name: npz[name] for name in npz.files}
    header = json.loads(arrays.pop("header").tobytes().decode())
    return list(shard_arrays(header, arrays))


def shard_arrays(header: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> Iterator[bytes]:
    """:func:`shard_bundle` of a bundle's ``header`` and arrays not yet serialised, one shard at a
    time. Linear in the users and keys: every array is ordered by shard once, then cut."""
    user_ids = arrays["user_ids"]
    n_users = int(user_ids.size)
    shards = shard_count(n_users)
    assignment = np.fromiter(
        (shard_of(str(u), shards) for u in user_ids.tolist()), dtype=np.int64, count=n_users
    )
    by_shard = np.argsort(assignment, kind="stable")  # each shard's users stay in id order
    user_bounds = np.searchsorted(assignment[by_shard], np.arange(shards + 1))
    local = np.empty(n_users, dtype=np.int64)  # each user's position inside its shard
    local[by_shard] = np.arange(n_users) - user_bounds[assignment[by_shard]]
    keyed = {}
    for keys_name, value_names in _USER_KEYED.items():
        if keys_name not in arrays:
            continue
        rows, users = np.divmod(arrays[keys_name].astype(np.int64), n_users)
        key_shard = assignment[users]
        order = np.argsort(key_shard, kind="stable")  # sorted keys stay sorted inside a shard
        bounds = np.searchsorted(key_shard[order], np.arange(shards + 1))
        keyed[keys_name] = (rows[order], local[users[order]], order, bounds, value_names)
    history = None
    # Arrays with one value per history entry (items, weights, orders, days since).
    history_entries = [
        name for name in arrays if name.startswith("model__history_") and name != "model__history_indptr"
    ]
    if "model__history_indptr" in arrays:
        indptr = arrays["model__history_indptr"].astype(np.int64)
        lengths = np.diff(indptr)[by_shard]
        ends = np.cumsum(lengths)
        take = np.repeat(indptr[by_shard] - (ends - lengths), lengths) + np.arange(
            int(ends[-1]) if n_users else 0
        )
        history = (lengths, np.concatenate([[0], ends]), take)
    user_state = [name for name in arrays if name.startswith(("state__user_", "model__user_"))]
    shard_header = {k: v for k, v in header.items() if k != "format"}
    for shard in range(shards):
        members = by_shard[user_bounds[shard] : user_bounds[shard + 1]]
        sub = dict(arrays)
        sub["user_ids"] = user_ids[members]
        for name in user_state:
            sub[name] = arrays[name][members]
        for keys_name, (rows, positions, order, bounds, value_names) in keyed.items():
            part = slice(bounds[shard], bounds[shard + 1])
            sub[keys_name] = rows[part] * members.size + positions[part]
            for value_name in value_names:
                sub[value_name] = arrays[value_name][order[part]]
        if history is not None:
            lengths, starts, take = history
            first, last = user_bounds[shard], user_bounds[shard + 1]
            entries = take[starts[first] : starts[last]]
            for name in history_entries:
                sub[name] = arrays[name][entries]
            sub["model__history_indptr"] = np.concatenate([[0], np.cumsum(lengths[first:last])]).astype(
                np.int64
            )
        compact = {name: _compact(name, value) for name, value in sub.items()}
        for keys_name in keyed:  # sorted keys as gaps: small numbers that compress well
            compact[keys_name] = _narrow(np.diff(sub[keys_name].astype(np.int64), prepend=0))
        yield write_bundle(
            shard_header | {"shard": shard, "shards": shards, "delta_keys": sorted(keyed)},
            compact,
            compress=True,
        )


def _compact(name: str, value: np.ndarray) -> np.ndarray:
    """``value`` in the smallest type that serves it: ids as bytes when ASCII, state and history
    floats as float32 (model coefficients keep float64), integer arrays narrowed when they fit."""
    if value.dtype.kind == "U":
        try:
            return value.astype(np.bytes_)
        except UnicodeEncodeError:
            return value
    if name in _HALF_PRECISION:
        return value.astype(np.float16)
    if value.dtype.kind == "f" and name.startswith(("state__", "model__history", "model__user_")):
        whole = (
            value.size and bool(np.all(value == np.round(value))) and value.min() >= 0 and value.max() < 2**16
        )
        return value.astype(np.uint16) if whole else value.astype(np.float32)
    if value.dtype.kind in "iu" and not name.startswith("model__") and value.size:
        return _narrow(value, (np.int32, np.uint32))
    return value


def _narrow(
    value: np.ndarray, types: tuple[type[np.integer[Any]], ...] = (np.uint16, np.int32, np.uint32)
) -> np.ndarray:
    """An integer array in the first of ``types`` that holds it (else as it is)."""
    if value.size == 0:
        return value
    low, high = int(value.min()), int(value.max())
    for narrow in types:
        info = np.iinfo(narrow)
        if info.min <= low and high <= info.max:
            return value.astype(narrow)
    return value


def load_bundle(
    data: bytes, expected_sha256: str | None = None, *, at_shard_precision: bool = False
) -> ScoringBundle:
    """Read bundle bytes (verifying the SHA-256 when given) into a :class:`ScoringBundle`. With
    ``at_shard_precision``, a whole bundle's state is kept at the precision its serving shards store
    it (:func:`_at_serving_precision`), so it scores every user as the shards do (a shard is at it
    already)."""
    if expected_sha256 is not None and hashlib.sha256(data).hexdigest() != expected_sha256:
        raise ServiceError(
            "The model artifact is corrupt (checksum mismatch).", remedy="Retrain or re-upload the model."
        )
    with np.load(io.BytesIO(data), allow_pickle=False) as npz:
        arrays = {name: npz[name] for name in npz.files}
    header = json.loads(arrays.pop("header").tobytes().decode())
    if header.get("format") != BUNDLE_FORMAT:
        raise ServiceError(
            f"Unsupported model bundle format {header.get('format')}.", remedy="Retrain the model."
        )
    delta_keys = set(header.get("delta_keys", []))
    whole = at_shard_precision and "shard" not in header
    for name, value in arrays.items():
        if name in delta_keys:
            arrays[name] = np.cumsum(value, dtype=np.int64)
        elif value.dtype in (np.uint16, np.float16):  # stored narrow; computed on as float32
            arrays[name] = value.astype(np.float32)
        elif whole:
            arrays[name] = _at_serving_precision(name, value)
    return ScoringBundle(header, arrays)


def _at_serving_precision(name: str, value: np.ndarray) -> np.ndarray:
    """A whole bundle's array at the precision its serving shards keep it (:func:`_compact`'s floats),
    so that it scores every user as the shards do, to the last bits of float64 arithmetic: the
    targeting preview (the whole bundle) then ranks, cuts and holds out the users the launch (the
    shards) does. From float64 state, users whose scores tie at the shards' precision took other ranks
    (a preview's "178 will be uploaded" against the launch's 179)."""
    if value.dtype.kind != "f":
        return value
    if name in _HALF_PRECISION:
        return value.astype(np.float16).astype(np.float32)
    if name.startswith(("state__", "model__history", "model__user_")):
        return value.astype(np.float32)
    return value


def top_k(scores: NDArray[np.float64], k: int) -> NDArray[np.int64]:
    """Indices of the ``k`` highest scores, best first (O(n) selection, then a sort of only ``k``)."""
    k = min(k, scores.size)
    if k <= 0:
        return np.zeros(0, dtype=np.int64)
    candidates = np.argpartition(-scores, k - 1)[:k]
    return candidates[np.argsort(-scores[candidates], kind="stable")].astype(np.int64)


class ScoringBundle:
    """A loaded model. Build it with :func:`load_bundle`; it is immutable and safe to cache per process."""

    def __init__(self, header: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
        self.header = header
        self.model_type: str = header["model_type"]
        self.algorithm: str = header["algorithm"]
        self.feature_names: list[str] = list(header.get("feature_names", []))
        self.categories: list[str] = list(header.get("categories", []))
        self._arrays = arrays
        self._user_ids = arrays["user_ids"]
        self._product_ids = arrays["product_ids"]
        self._model = {k.removeprefix("model__"): v for k, v in arrays.items() if k.startswith("model__")}
        state_arrays = {k.removeprefix("state__"): v for k, v in arrays.items() if k.startswith("state__")}
        self._state = (
            FeatureState(
                as_of_day=float(header["as_of_day"]),
                n_users=self._user_ids.size,
                price_median=float(header["price_median"]),
                **state_arrays,
            )
            if self.model_type == "purchase"
            else None
        )
        self._fallbacks = arrays.get("fallbacks", np.zeros(0))
        self._user_share: NDArray[np.float64] | None = None

    @property
    def user_count(self) -> int:
        """How many users the model was trained on (the only ones it can score)."""
        return int(self._user_ids.size)

    def has_user(self, user_id: str) -> bool:
        """Whether ``user_id`` was in the training data."""
        return _position(self._user_ids, user_id) >= 0

    @property
    def user_ids(self) -> NDArray[np.str_]:
        """Every training user's id, sorted, in :meth:`score_all_users` order (read-only)."""
        view = self._user_ids.view()
        view.flags.writeable = False
        return view

    def user_ids_at(self, indices: NDArray[np.int64]) -> list[str]:
        """The user ids at positions returned by :meth:`score_all_users` / :func:`top_k`."""
        ids = self._user_ids[indices]
        return [u.decode() if isinstance(u, bytes) else str(u) for u in ids.tolist()]

    def ignored_features(self, extra_features: Mapping[str, float]) -> list[str]:
        """Names in ``extra_features`` the model does not use (callers may warn about them)."""
        return sorted(set(extra_features) - set(self.feature_names))

    # Purchase likelihood ---------------------------------------------------------------------------

    def score_purchase(
        self, user_id: str, product_id: str, extra_features: Mapping[str, float] | None = None
    ) -> float:
        """Probability that ``user_id`` buys ``product_id`` in the model's horizon.

        ``extra_features`` override computed features by name. An unknown user raises ``NotFound``;
        an unknown product is scored as a new product (popularity 0, median price).
        """
        features = self.purchase_features(user_id, product_id, extra_features)
        return float(self.predict_matrix(features)[0])

    def predict_purchase(
        self, user_id: str, product_id: str, extra_features: Mapping[str, float] | None = None
    ) -> Prediction:
        """:meth:`score_purchase` with a reason, shaped for the API response."""
        features = self.purchase_features(user_id, product_id, extra_features)
        score = float(self.predict_matrix(features)[0])
        return Prediction(
            product_id=product_id, score=score, reason=self._purchase_reason(features[0], product_id)
        )

    def predict_top_products(
        self,
        user_id: str,
        k: int = 10,
        extra_features: Mapping[str, float] | None = None,
        *,
        exclude_purchased: bool = False,
    ) -> list[Prediction]:
        """The ``k`` products ``user_id`` is most likely to buy in the model's horizon, best first,
        each with its reason (a purchase model asked without a product); with ``exclude_purchased``
        only products the user never bought."""
        state = self._purchase_state()
        user = self._require_user(user_id)
        products = np.arange(self._product_ids.size)
        rows = pair_features(state, np.full(products.size, user), products, self.feature_names)
        self._apply_overrides(rows, extra_features)
        scores = self.predict_matrix(rows)
        if exclude_purchased and "user_product_purchases" in self.feature_names:
            scores[rows[:, self.feature_names.index("user_product_purchases")] > 0] = -np.inf
        return [
            Prediction(
                product_id=self._product_id(i),
                score=float(scores[i]),
                reason=self._purchase_reason(rows[i], self._product_id(i)),
            )
            for i in top_k(scores, k)
            if np.isfinite(scores[i])
        ]

    def _apply_overrides(self, rows: NDArray[np.float64], extra_features: Mapping[str, float] | None) -> None:
        for name, value in (extra_features or {}).items():
            if name in self.feature_names:
                column = self.feature_names.index(name)
                number = _as_float(value)
                rows[:, column] = number if math.isfinite(number) else self._fallbacks[column]

    def purchase_features(
        self, user_id: str, product_id: str, extra_features: Mapping[str, float] | None = None
    ) -> NDArray[np.float64]:
        """The ``(1, n_features)`` row the model sees for this request, overrides applied."""
        state = self._purchase_state()
        user = self._require_user(user_id)
        product = _position(self._product_ids, product_id)
        row = pair_features(state, np.array([user]), np.array([product]), self.feature_names)
        self._apply_overrides(row, extra_features)
        return row

    def score_all_users(self, product_id: str) -> NDArray[np.float64]:
        """Score of ``product_id`` for every training user, in :meth:`user_ids_at` order."""
        scores = np.empty(self.user_count)
        for first, chunk in self.iter_user_scores(product_id):
            scores[first : first + chunk.size] = chunk
        return scores

    def user_positions(self, user_ids: Sequence[str]) -> NDArray[np.int64]:
        """Each user's position in :meth:`user_ids_at` order (the order of :meth:`spend_and_orders`),
        -1 for a user the model was not trained on."""
        return np.array([_position(self._user_ids, user) for user in user_ids], dtype=np.int64)

    def score_pairs(self, user_ids: Sequence[str], product_ids: Sequence[str]) -> NDArray[np.float64]:
        """Purchase probability of each pair ``(user_ids[i], product_ids[i])`` in the model's horizon, as
        :meth:`score_purchase` gives it, the pairs scored together (one feature matrix, not one per
        pair: a batch of orders' customers and products); NaN for a user the model was not trained on.
        An unknown product is scored as a new product. Raises ``ServiceError`` for a recommendation
        model."""
        state = self._purchase_state()
        users = self.user_positions(user_ids)
        products = np.array(
            [_position(self._product_ids, product) for product in product_ids], dtype=np.int64
        )
        scores = np.full(users.size, np.nan)
        known = users >= 0
        if known.any():
            features = pair_features(state, users[known], products[known], self.feature_names)
            scores[known] = self.predict_matrix(features)
        return scores

    def iter_user_scores(
        self, product_id: str, chunk_users: int = _CHUNK_ROWS
    ) -> Iterator[tuple[int, NDArray[np.float64]]]:
        """The scores of ``product_id`` for every training user, ``chunk_users`` users at a time in
        :meth:`user_ids_at` order, as ``(position of the chunk's first user, scores)``: what a caller
        that must not hold every user's score at once (a segment activation) iterates."""
        for first in range(0, self.user_count, chunk_users):
            last = min(first + chunk_users, self.user_count)
            yield first, self.score_users(product_id, first, last)

    def order_probabilities(self) -> NDArray[np.float64] | None:
        """Each training user's probability (in :meth:`user_ids_at` order) of ordering anything in the
        model's horizon: the two-part model's buyer part; None for a model without one."""
        if self.algorithm != "two_part":
            return None
        logit = self._model["user_buyer_logit"].astype(np.float64)
        return np.asarray(1.0 / (1.0 + np.exp(-logit)), dtype=np.float64)

    def bought_by(self, product_id: str) -> NDArray[np.bool_]:
        """Whether each training user (in :meth:`user_ids_at` order) bought ``product_id`` before the
        model's data ended (all ``False`` for a product the model does not know)."""
        product = _position(self._product_ids, product_id)
        bought = np.zeros(self.user_count, dtype=bool)
        if product < 0:
            return bought
        if self.model_type == "recommendation":
            indptr = self._model["history_indptr"]
            at = np.flatnonzero(self._model["history_items"] == product)
            bought[np.searchsorted(indptr, at, side="right") - 1] = True
            return bought
        units = product_features(
            self._purchase_state(), product, 0, self.user_count, ["user_product_purchases"]
        )
        return np.asarray(units[:, 0] > 0)

    def score_users(self, product_id: str, first: int, last: int) -> NDArray[np.float64]:
        """Score of ``product_id`` for the training users at positions ``first`` to ``last``
        (exclusive), in :meth:`user_ids_at` order."""
        if self.model_type == "recommendation":
            return self._recommendation_scores_for_users(product_id, first, last)
        state = self._purchase_state()
        product = _position(self._product_ids, product_id)
        if product < 0:
            users = np.arange(first, last)
            features = pair_features(state, users, np.full(users.size, product), self.feature_names)
            return self.predict_matrix(features)
        # The decision is a sum over features: the user-only ones' share is the same for every
        # product, so it is computed once per bundle; per product only the rest is.
        names = [name for name in self.feature_names if name not in USER_ONLY_FEATURES]
        columns = [self.feature_names.index(name) for name in names]
        features = product_features(state, product, first, last, names)
        m = self._model
        scaled = (log1p_columns(features, m["log_mask"][columns]) - m["mean"][columns]) / m["scale"][columns]
        decision = scaled @ m["coef"][columns] + self._user_decision()[first:last] + m["intercept"][0]
        probability = 1.0 / (1.0 + np.exp(-decision))
        if self.algorithm == "two_part":
            probability *= 1.0 / (1.0 + np.exp(-m["user_buyer_logit"][first:last].astype(np.float64)))
            probability = calibrated(probability, m.get("calibration"))
        return np.asarray(probability, dtype=np.float64)

    def _user_decision(self) -> NDArray[np.float64]:
        """Every user's share of the decision from the features that depend on the user alone
        (computed once, in chunks, and kept: 8 bytes a user)."""
        if self._user_share is None:
            state = self._purchase_state()
            names = [name for name in self.feature_names if name in USER_ONLY_FEATURES]
            columns = [self.feature_names.index(name) for name in names]
            m = self._model
            share = np.empty(self.user_count)
            for start in range(0, self.user_count, _CHUNK_ROWS):
                users = np.arange(start, min(start + _CHUNK_ROWS, self.user_count))
                # Any product will do: only user-only columns are asked for.
                features = pair_features(state, users, np.zeros(users.size, np.int64), names)
                logged = log1p_columns(features, m["log_mask"][columns])
                share[users] = ((logged - m["mean"][columns]) / m["scale"][columns]) @ m["coef"][columns]
            self._user_share = share
        return self._user_share

    def predict_matrix(self, features: NDArray[np.float64]) -> NDArray[np.float64]:
        """Purchase probabilities for a raw feature matrix in the trained order (no overrides)."""
        probability = 1.0 / (1.0 + np.exp(-self._decision(features)))
        if self.algorithm == "two_part":
            customers = features[:, [self.feature_names.index(name) for name in CUSTOMER_FEATURES]]
            # Rows of one customer (a top-products request) share one walk of the trees.
            unique, inverse = np.unique(customers, axis=0, return_inverse=True)
            logit = buyer_logit(self._model, unique, prefix="buyer_")[inverse.reshape(-1)]
            probability = calibrated(probability / (1.0 + np.exp(-logit)), self._model.get("calibration"))
        return np.asarray(probability, dtype=np.float64)

    def _decision(self, features: NDArray[np.float64]) -> NDArray[np.float64]:
        m = self._model
        if self.algorithm in ("logistic", "two_part"):
            scaled = (log1p_columns(features, m["log_mask"]) - m["mean"]) / m["scale"]
            return np.asarray(scaled @ m["coef"] + m["intercept"][0], dtype=np.float64)
        raise ServiceError(
            f"Model algorithm {self.algorithm} is not served (gradient boosting was removed).",
            remedy="Retrain the model: training uses logistic regression.",
        )

    def _purchase_reason(self, row: NDArray[np.float64], product_id: str) -> str:
        values = dict(zip(self.feature_names, row.tolist(), strict=True))
        state = self._purchase_state()
        product = _position(self._product_ids, product_id)
        category = self.categories[int(state.product_category[product])] if product >= 0 else None
        if values["user_product_purchases"] > 0:
            times = _count(values["user_product_purchases"])
            days = round(values["user_product_days_since_last"])
            when = f"{_count(days, 'day')} ago" if days >= 1 else "less than a day ago"
            return f"bought this product {times} before, last bought {when}"
        if values["user_category_purchases_90d"] > 0 and category:
            units = _count(values["user_category_purchases_90d"], "item")
            return f"bought {units} in {category} in the last 90 days"
        if values["user_orders_90d"] > 0:
            return f"placed {_count(values['user_orders_90d'], 'order')} in the last 90 days"
        if product < 0:
            return "new product: scored from the customer's history only"
        return f"popular product: {_count(values['product_purchases_90d'], 'unit')} sold in the last 90 days"

    # Recommendation ---------------------------------------------------------------------------------

    def recommend(
        self, user_id: str, k: int = 10, *, exclude_purchased: bool = False
    ) -> list[tuple[str, float]]:
        """The ``k`` best products for ``user_id`` as ``(product_id, score)``, best first; with
        ``exclude_purchased`` only products the user never bought, ranked by the model's new-products
        blend when it has one (fewer than ``k`` when the catalogue runs out)."""
        user = self._require_user(user_id)
        scores = self._recommendation_scores_for_user(user, new_only=exclude_purchased)
        if exclude_purchased:
            scores[self._history_items(user)] = -np.inf
        best = [i for i in top_k(scores, k).tolist() if np.isfinite(scores[i])]
        return [(self._product_id(i), float(scores[i])) for i in best]

    def predict_recommendations(
        self, user_id: str, k: int = 10, *, exclude_purchased: bool = False
    ) -> list[Prediction]:
        """:meth:`recommend` with a reason per item, shaped for the API response."""
        user = self._require_user(user_id)
        owned = set(self._history_items(user).tolist())
        predictions = []
        for product_id, score in self.recommend(user_id, k, exclude_purchased=exclude_purchased):
            product = _position(self._product_ids, product_id)
            if product in owned:
                reason = "bought before: customers like this one rebuy"
            elif owned:
                reason = "bought together with items in this customer's history"
            else:
                reason = "popular with customers right now"
            predictions.append(Prediction(product_id=product_id, score=score, reason=reason))
        return predictions

    def _blend(self, new_only: bool) -> tuple[list[str], list[float]]:
        """The blend's part names and weights; with ``new_only`` the new-products blend (when the
        model has one: models trained before it rank new products with the whole blend)."""
        h = self.header
        if new_only and "new_product_parts" in h:
            return list(h["new_product_parts"]), list(h["new_product_weights"])
        return list(h["blend_parts"]), list(h["blend_weights"])

    def _recommendation_scores_for_user(self, user: int, *, new_only: bool = False) -> NDArray[np.float64]:
        m, h = self._model, self.header
        items, weights = self._history_items(user), self._history_weights(user)
        n_products = self._product_ids.size
        factors = m["item_factors"]

        def affinity() -> NDArray[np.float64]:
            used = np.ones(items.size) if h.get("affinity_input") == "owned" else weights
            embedding = used @ factors[items] if items.size else np.zeros(factors.shape[1])
            return np.asarray((factors @ embedding) / h["affinity_scale"])

        def owned() -> NDArray[np.float64]:
            values = np.zeros(n_products)
            values[items] = 1.0
            return values

        if "blend_weights" not in h:  # a model trained before the taste blend
            return np.asarray(
                affinity() + h["popularity_weight"] * m["popularity"] + h["owned_weight"] * owned()
            )

        def on_history(values: NDArray[np.float64]) -> NDArray[np.float64]:
            out = np.zeros(n_products)
            out[items] = values
            return out

        def taste() -> NDArray[np.float64]:
            vector = weights @ m["taste"][items] if items.size else np.zeros(m["taste"].shape[1])
            norm = float(np.linalg.norm(vector))
            return np.asarray(m["taste"] @ (vector / norm)) if norm > 0 else np.zeros(n_products)

        def category() -> NDArray[np.float64]:
            share = m["category_share"]
            lift = category_lift(
                np.bincount(m["product_category"][items], weights, minlength=share.size)[None, :],
                np.array([weights.sum()]),
                share,
                float(h["category_prior"]),
            )[0]
            return np.asarray(lift[m["product_category"]])

        entries = self._history_entries(user)
        parts: dict[str, Any] = {
            "popularity": lambda: m["popularity"],
            "popularity_recent": lambda: m["popularity_recent"],
            "owned": owned,
            "repeat_orders": lambda: on_history(np.log1p(m["history_orders"][entries])),
            "repeat_count": lambda: on_history(m["history_orders"][entries]),
            "repeat_model": lambda: on_history(m["history_repeat"][entries]),
            "repeat_share": lambda: on_history(
                m["history_orders"][entries] / max(float(m["user_orders"][user]), 1.0)
            ),
            "repeat_recency": lambda: on_history(np.log1p(m["history_days_since"][entries])),
            "repeat_orders_since": lambda: on_history(np.log1p(m["history_orders_since"][entries])),
            "repeat_product": lambda: owned() * m["product_rebuy"],
            "affinity": affinity,
            "taste": taste,
            "category": category,
        }
        total = np.zeros(n_products)
        for name, weight in zip(*self._blend(new_only), strict=True):
            if weight:
                total += weight * np.asarray(parts[name](), dtype=np.float64)
        return total

    def _recommendation_scores_for_users(self, product_id: str, first: int, last: int) -> NDArray[np.float64]:
        """The score of ``product_id`` for the users at positions ``first`` to ``last`` (exclusive):
        segmented sums over their histories, never users x products."""
        m, h = self._model, self.header
        n = last - first
        product = _position(self._product_ids, product_id)
        if product < 0:
            return np.zeros(n)
        indptr = m["history_indptr"][first : last + 1]
        entries = slice(int(indptr[0]), int(indptr[-1]))
        items = m["history_items"][entries]
        weights = m["history_weights"][entries]
        starts = indptr[:-1] - indptr[0]
        has_history = np.diff(indptr) > 0

        def per_user(values: NDArray[np.float64]) -> NDArray[np.float64]:
            # A user's sum over their history entries (0 without any).
            return np.add.reduceat(np.append(values, 0.0), starts) * has_history

        def affinity() -> NDArray[np.float64]:
            # score(u) = sum over u's history of weight * <factor_j, factor_product>, a segmented sum.
            similarity = m["item_factors"] @ m["item_factors"][product] / h["affinity_scale"]
            used = np.ones(items.size) if h.get("affinity_input") == "owned" else weights
            return per_user(used * similarity[items])

        # The users who bought the product, and where in the entries.
        at = np.flatnonzero(items == product)
        rows = np.searchsorted(indptr - indptr[0], at, side="right") - 1

        def on_buyers(values: NDArray[np.float64]) -> NDArray[np.float64]:
            out = np.zeros(n)
            out[rows] = values
            return out

        if "blend_weights" not in h:  # a model trained before the taste blend
            owned = on_buyers(np.ones(at.size))
            return np.asarray(
                affinity() + h["popularity_weight"] * m["popularity"][product] + h["owned_weight"] * owned
            )

        def taste() -> NDArray[np.float64]:
            norms = m["user_taste_norm"][first:last]
            similarity = m["taste"] @ m["taste"][product]
            return np.divide(per_user(weights * similarity[items]), norms, out=np.zeros(n), where=norms > 0)

        def category() -> NDArray[np.float64]:
            category = m["product_category"]
            in_category = per_user(weights * (category[items] == category[product]))
            return category_lift(
                in_category[:, None],
                per_user(weights.astype(np.float64)),
                m["category_share"][category[product] : category[product] + 1],
                float(h["category_prior"]),
            )[:, 0]

        def history(name: str) -> NDArray[np.float64]:
            return np.asarray(m[name][entries][at], dtype=np.float64)

        parts: dict[str, Any] = {
            "popularity": lambda: np.full(n, float(m["popularity"][product])),
            "popularity_recent": lambda: np.full(n, float(m["popularity_recent"][product])),
            "owned": lambda: on_buyers(np.ones(at.size)),
            "repeat_orders": lambda: on_buyers(np.log1p(history("history_orders"))),
            "repeat_count": lambda: on_buyers(history("history_orders")),
            "repeat_model": lambda: on_buyers(history("history_repeat")),
            "repeat_share": lambda: on_buyers(
                history("history_orders") / np.maximum(m["user_orders"][first:last][rows], 1.0)
            ),
            "repeat_recency": lambda: on_buyers(np.log1p(history("history_days_since"))),
            "repeat_orders_since": lambda: on_buyers(np.log1p(history("history_orders_since"))),
            "repeat_product": lambda: on_buyers(np.full(at.size, float(m["product_rebuy"][product]))),
            "affinity": affinity,
            "taste": taste,
            "category": category,
        }
        total = np.zeros(n)
        for name, weight in zip(*self._blend(False), strict=True):
            if weight:
                total += weight * np.asarray(parts[name](), dtype=np.float64)
        return total

    def _history_entries(self, user: int) -> slice:
        indptr = self._model["history_indptr"]
        return slice(int(indptr[user]), int(indptr[user + 1]))

    def _history_items(self, user: int) -> NDArray[np.int64]:
        indptr = self._model["history_indptr"]
        return np.asarray(self._model["history_items"][indptr[user] : indptr[user + 1]], dtype=np.int64)

    def _history_weights(self, user: int) -> NDArray[np.float64]:
        indptr = self._model["history_indptr"]
        return np.asarray(self._model["history_weights"][indptr[user] : indptr[user + 1]], dtype=np.float64)

    # Shared -----------------------------------------------------------------------------------------

    def _product_id(self, index: int | np.integer[Any]) -> str:
        value = self._product_ids[index]
        return value.decode() if isinstance(value, bytes) else str(value)

    def spend_and_orders(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Each training user's spend and number of orders ever, as of training (purchase models),
        in :meth:`user_ids_at` order. Raises ``ServiceError`` for a recommendation model."""
        state = self._purchase_state()
        return state.user_spend_total, state.user_orders_total

    def _purchase_state(self) -> FeatureState:
        if self._state is None:
            raise ServiceError("This model recommends products; it does not score purchases.")
        return self._state

    def _require_user(self, user_id: str) -> int:
        position = _position(self._user_ids, user_id)
        if position < 0:
            raise NotFound(
                f"User {user_id} was not in the model's training dataset "
                f"({self.user_count} users available).",
                field="user_id",
                remedy="Use a user_id from the training data, or retrain the model with this user.",
            )
        return position


def _position(sorted_ids: np.ndarray, key: str) -> int:
    """Index of ``key`` in a sorted string array (unicode, or bytes in a compact bundle), or -1."""
    probe: str | bytes = key
    if sorted_ids.dtype.kind == "S":
        try:
            probe = key.encode("ascii")
        except UnicodeEncodeError:
            return -1
    position = int(np.searchsorted(sorted_ids, probe))
    return position if position < sorted_ids.size and sorted_ids[position] == probe else -1


def calibrated(
    probability: NDArray[np.float64], calibration: NDArray[np.float64] | None
) -> NDArray[np.float64]:
    """``probability`` through the two-part model's Platt scaling, ``sigmoid(slope * logit(p) +
    intercept)`` (``calibration`` is ``[slope, intercept]``; None: unchanged)."""
    if calibration is None:
        return probability
    clipped = np.clip(probability, 1e-12, 1.0 - 1e-12)
    logit = np.log(clipped) - np.log1p(-clipped)
    return np.asarray(1.0 / (1.0 + np.exp(-(calibration[0] * logit + calibration[1]))), dtype=np.float64)


def buyer_logit(
    arrays: Mapping[str, np.ndarray], features: NDArray[np.float64], prefix: str = "buyer_"
) -> NDArray[np.float64]:
    """The two-part model's buyer logit of each row of ``features`` (columns in
    :data:`~shared.ml.features.CUSTOMER_FEATURES` order), from the buyer part's arrays named with
    ``prefix``: a gradient boosting's trees (``tree_*``: every row walks every tree at once, one level
    a step; a leaf is its own child, so a row that reached one stays) or a logistic regression's
    coefficients (``log_mask``, ``mean``, ``scale``, ``coef``, ``intercept``)."""
    rows = np.asarray(features, dtype=np.float64)
    if f"{prefix}tree_root" not in arrays:
        scaled = (
            log1p_columns(rows, arrays[f"{prefix}log_mask"].astype(bool)) - arrays[f"{prefix}mean"]
        ) / arrays[f"{prefix}scale"]
        return np.asarray(
            scaled @ arrays[f"{prefix}coef"] + arrays[f"{prefix}intercept"][0], dtype=np.float64
        )
    root = arrays[f"{prefix}tree_root"].astype(np.int64)
    feature, threshold = arrays[f"{prefix}tree_feature"].astype(np.int64), arrays[f"{prefix}tree_threshold"]
    left, right = (
        arrays[f"{prefix}tree_left"].astype(np.int64),
        arrays[f"{prefix}tree_right"].astype(np.int64),
    )
    missing_left = arrays[f"{prefix}tree_missing_left"].astype(bool)
    logit = np.full(rows.shape[0], float(arrays[f"{prefix}baseline"][0]))
    # Rows a step: bounds the (rows x trees) node positions to a few MB.
    step = max(1, _CHUNK_ROWS * 4 // max(root.size, 1))
    for start in range(0, rows.shape[0], step):
        part = rows[start : start + step]
        node = np.broadcast_to(root, (part.shape[0], root.size)).copy()
        for _ in range(int(arrays[f"{prefix}tree_depth"][0])):
            value = np.take_along_axis(part, feature[node], axis=1)
            go_left = np.where(np.isnan(value), missing_left[node], value <= threshold[node])
            node = np.where(go_left, left[node], right[node])
        logit[start : start + part.shape[0]] += arrays[f"{prefix}tree_value"][node].sum(axis=1)
    return logit


def category_lift(
    category_weight: NDArray[np.float64],
    total_weight: NDArray[np.float64],
    share: NDArray[np.float64],
    prior: float,
) -> NDArray[np.float64]:
    """Users x categories: ``log((w_c + prior * share_c) / (w + prior)) - log(share_c)``, the smoothed
    lift of a user's share of their history weight in each category (``category_weight``, users x
    categories, over ``total_weight`` per user) over the shop's share (0 for a category the shop never
    sold): the recommendation model's ``category`` part."""
    sold = share > 0
    safe = np.where(sold, share, 1.0)
    smoothed = (category_weight + prior * safe) / (total_weight[:, None] + prior)
    return np.asarray(np.where(sold, np.log(smoothed) - np.log(safe), 0.0), dtype=np.float64)


def _as_float(value: object) -> float:
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return math.nan


def _count(value: float, noun: str = "time") -> str:
    count = round(value)
    return f"{count} {noun}{'' if count == 1 else 's'}"


@dataclass(frozen=True)
class UserScores:
    """One product's score for every user of a model, read from its serving shards
    (:func:`score_shards`), in the whole bundle's order (sorted by user id): ``user_ids`` (bytes when
    every shard stores them as bytes, else str), ``scores``, and when asked for, whether each user
    bought the product (``bought``) and their spend and orders ever (``spend``, ``orders``)."""

    user_ids: NDArray[Any]
    scores: NDArray[np.float64]
    bought: NDArray[np.bool_] | None = None
    spend: NDArray[np.float64] | None = None
    orders: NDArray[np.float64] | None = None


def score_shards(
    shards: Iterator[ScoringBundle], product_id: str, *, bought: bool = False, values: bool = False
) -> UserScores:
    """``product_id`` scored for every user of a model, one serving shard at a time (each shard is
    let go once scored), the results put back in user-id order: what a segment of millions of users
    needs without the whole bundle in memory (about 450 bytes a user) — only the ids and the columns
    asked for stay, about 25 bytes a user. A shard scores its users as the whole bundle does, from
    state stored as float32 (``shard_bundle``): the scores agree with the whole bundle's to float32's
    precision. With ``bought``, :meth:`ScoringBundle.bought_by`; with ``values``,
    :meth:`ScoringBundle.spend_and_orders` (purchase models)."""
    ids: list[NDArray[Any]] = []
    columns: dict[str, list[NDArray[Any]]] = {"scores": [], "bought": [], "spend": [], "orders": []}
    for shard in shards:
        ids.append(np.asarray(shard.user_ids))
        columns["scores"].append(shard.score_all_users(product_id))
        if bought:
            columns["bought"].append(shard.bought_by(product_id))
        if values:
            spend, orders = shard.spend_and_orders()
            columns["spend"].append(np.asarray(spend, dtype=np.float64))
            columns["orders"].append(np.asarray(orders, dtype=np.float64))
        del shard
    if not ids:
        raise ServiceError("The model has no serving shards.", remedy="Retrain the model.")
    if any(part.dtype.kind != "S" for part in ids):  # a shard with a non-ASCII id keeps str
        ids = [part.astype(np.str_) if part.dtype.kind == "S" else part for part in ids]
    user_ids = np.concatenate(ids)
    del ids
    # UTF-8 bytes sort as their code points do: the order is the whole bundle's either way.
    order = np.argsort(user_ids, kind="stable")
    user_ids = user_ids[order]

    def ordered(name: str) -> NDArray[Any] | None:
        parts = columns.pop(name)
        return np.concatenate(parts)[order] if parts else None

    scores = ordered("scores")
    assert scores is not None
    return UserScores(
        user_ids=user_ids,
        scores=scores,
        bought=ordered("bought"),
        spend=ordered("spend"),
        orders=ordered("orders"),
    )
