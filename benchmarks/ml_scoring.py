"""Scoring speed of the numpy bundle.

* Audience scoring: one product for every user, then the top 10,000, on a bundle of 1,000,000 users
  (target <= 1 s). Training a model on 1M synthetic users does not fit this benchmark's time, so the
  model is trained on a 2,000-user synthetic shop and its arrays are re-hosted on a 1M-user feature
  state built from 3M synthetic order lines (same bundle format, same code path as production).
* Single prediction: warm in-process ``score_purchase`` (feature lookup + model) against the bare
  scikit-learn ``predict_proba`` on a prepared row, p50 and p99.

Run with ``python -m benchmarks.ml_scoring``.
"""

from __future__ import annotations

import io
import json
import time
from collections.abc import Callable

import joblib
import numpy as np

from benchmarks._rows import BenchRow, bench_row, print_rows
from shared.ml.features import History, build_state, feature_fallbacks, pair_features
from shared.ml.scoring import ScoringBundle, load_bundle, top_k, write_bundle
from shared.ml.taste import TASTE_FACTORS
from shared.ml.trained import Algorithm, TrainedModel, TrainingConfig
from shared.ml.training import train_model
from tools.synthetic import SyntheticConfig, generate_shop

N_USERS = 1_000_000
N_PRODUCTS = 1_000
N_LINES = 3_000_000
TOP = 10_000
REPEATS = 5
LATENCY_CALLS = 2_000


def run() -> list[BenchRow]:
    """Measure audience scoring at 1M users and single-prediction latency (logistic regression, the
    one algorithm served: gradient boosting was removed, 23 s at 1M users)."""
    shop = generate_shop(SyntheticConfig(n_users=2000, n_products=300, seed=1))
    rows: list[BenchRow] = []
    for algorithm in ("logistic",):
        model = train_model(
            shop.data, name="bench", model_type="purchase", config=TrainingConfig(algorithm=algorithm)
        )
        rows.extend(_audience_rows(model, algorithm))
        rows.extend(_latency_rows(model, algorithm))
    return rows


def _audience_rows(model: TrainedModel, algorithm: Algorithm) -> list[BenchRow]:
    data = _million_user_bundle(model)
    bundle = load_bundle(data)
    product = "p00042"
    started = time.perf_counter()
    bundle.score_all_users("p00001")  # warm: the users' own share of the decision, once per bundle
    first_call = time.perf_counter() - started
    seconds = _median_seconds(lambda: top_k(bundle.score_all_users(product), TOP))
    searched = _median_seconds(lambda: top_k(_scores_searched_per_user(bundle, product), TOP))
    return [
        bench_row(
            f"{algorithm}.score_all_users_1m_plus_top_k",
            seconds,
            "s",
            baseline=searched,
            target="<= 1 s at 1M users",
            passed=seconds <= 1.0,
            notes=f"measured at {N_USERS:,} users, median of up to {REPEATS}, top {TOP:,}, warm (the "
            f"bundle's first call, which computes each user's own share once, took {first_call:.2f} s); "
            "baseline, same run: every feature computed per user with a search per pair (as before)",
        ),
        bench_row(f"{algorithm}.audience_users_per_second", N_USERS / seconds, "users/s"),
        bench_row(
            f"{algorithm}.bundle_size_1m_users", len(data) / 1e6, "MB", notes="float64 state, unicode ids"
        ),
    ]


def _latency_rows(model: TrainedModel, algorithm: Algorithm) -> list[BenchRow]:
    bundle = load_bundle(model.artifacts["bundle"].data)
    pipeline = joblib.load(io.BytesIO(model.artifacts["pipeline"].data))
    user, product = model.training_user_ids[7], "p00010"
    row = bundle.purchase_features(user, product)
    bundle_p50, bundle_p99 = _latency_ms(
        lambda: bundle.score_purchase(user, product, {"product_price": 20.0})
    )
    sklearn_p50, sklearn_p99 = _latency_ms(lambda: pipeline.predict_proba(row))
    return [
        bench_row(
            f"{algorithm}.score_purchase_p50",
            bundle_p50,
            "ms",
            baseline=sklearn_p50,
            notes="bundle incl. feature lookup; baseline: bare sklearn predict_proba on a ready row",
        ),
        bench_row(f"{algorithm}.score_purchase_p99", bundle_p99, "ms", baseline=sklearn_p99),
    ]


def _million_user_bundle(model: TrainedModel) -> bytes:
    """The trained model's arrays on a 1M-user feature state built from synthetic order lines."""
    rng = np.random.default_rng(0)
    activity = rng.lognormal(0.0, 1.0, N_USERS)
    popularity = 1.0 / np.arange(1, N_PRODUCTS + 1) ** 0.9
    user = rng.choice(N_USERS, N_LINES, p=activity / activity.sum())
    product = rng.choice(N_PRODUCTS, N_LINES, p=popularity / popularity.sum())
    price = rng.lognormal(3.0, 0.6, N_PRODUCTS)
    as_of = 20_000.0
    history = History(
        user=user.astype(np.int64),
        product=product.astype(np.int64),
        day=as_of - rng.uniform(0, 365, N_LINES),
        units=np.ones(N_LINES),
        amount=price[product],
        order_key=np.arange(N_LINES, dtype=np.int64),
    )
    state = build_state(
        history,
        as_of_day=as_of,
        n_users=N_USERS,
        product_category=rng.integers(0, 12, N_PRODUCTS),
        product_price=price,
        # Taste factors as training makes them: unit-length, TASTE_FACTORS dimensions.
        product_taste=_unit_rows(rng.normal(size=(N_PRODUCTS, TASTE_FACTORS))),
    )
    with np.load(io.BytesIO(model.artifacts["bundle"].data), allow_pickle=False) as small:
        header = json.loads(small["header"].tobytes())
        model_arrays = {name: small[name] for name in small.files if name.startswith("model__")}
    header |= {
        "as_of_day": as_of,
        "price_median": state.price_median,
        "categories": [f"c{k}" for k in range(12)],
    }
    return write_bundle(
        header,
        {
            "user_ids": np.array([f"u{k:07d}" for k in range(N_USERS)]),
            "product_ids": np.array([f"p{k:05d}" for k in range(N_PRODUCTS)]),
            **{f"state__{k}": v for k, v in state.arrays().items()},
            "fallbacks": feature_fallbacks(state.price_median),
            **model_arrays,
        },
    )


def _scores_searched_per_user(bundle: ScoringBundle, product_id: str) -> np.ndarray:
    """``score_all_users`` as it was: every user's pair and category values found by a binary search."""
    state = bundle._purchase_state()
    product = _product_index(bundle, product_id)
    scores = np.empty(bundle.user_count)
    for start in range(0, bundle.user_count, 65_536):
        users = np.arange(start, min(start + 65_536, bundle.user_count))
        features = pair_features(state, users, np.full(users.size, product), bundle.feature_names)
        scores[start : start + users.size] = bundle.predict_matrix(features)
    return scores


def _product_index(bundle: ScoringBundle, product_id: str) -> int:
    return int(np.searchsorted(bundle._product_ids, product_id))


def _unit_rows(matrix: np.ndarray) -> np.ndarray:
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def _median_seconds(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()  # warm-up: first-touch page faults are a cold start, not throughput
    first = time.perf_counter() - started
    if first > 5:
        return first  # far off target: repeating adds minutes, not information
    timings = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        action()
        timings.append(time.perf_counter() - started)
    return float(np.median(timings))


def _latency_ms(action: Callable[[], object]) -> tuple[float, float]:
    for _ in range(50):
        action()
    timings = np.empty(LATENCY_CALLS)
    for k in range(LATENCY_CALLS):
        started = time.perf_counter()
        action()
        timings[k] = time.perf_counter() - started
    p50, p99 = np.percentile(timings, [50, 99]) * 1000
    return float(p50), float(p99)


if __name__ == "__main__":
    print_rows(run())
