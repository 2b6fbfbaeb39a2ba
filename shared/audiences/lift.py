"""Lift of a segment audience measured against its holdout, from the shop's own orders (issue 15).

The users of a segment were split at activation (``shared.audiences.holdout``): the uploaded group
went to the platform, the holdout did not. Both groups look alike by score, so whatever differs in
what they bought afterwards is the effect of being uploaded (intention to treat: an uploaded user the
platform never matched still counts in the uploaded group).

**Window.** The orders of the data source's current dataset from the moment the activation finished
(the audience went live) to the dataset's latest order. The report reads the dataset's aggregates
(``aggregates.npz``: the users and where each product's order lines are in ``order-lines.bin``) and
then only the segment product's slice of the order lines, by ranged reads: a lookup and arithmetic,
whatever the number of orders (docs/data-plane.md). **Outcome.** A user *purchased* when they
bought the segment's product in the window; *revenue* is what they spent on it there (0 if nothing).

**Intervals (95 %).** Each group's purchase rate: Wilson score interval. The difference of purchase
rates: Newcombe's hybrid score interval from the two Wilson intervals (the normal approximation took a
group's rate of 0 as exact, so 20 of 360 uploaded buyers against 0 of 40 held out read as uplift).
Revenue per user and its difference: Welch's standard error with Student's t quantile at the
Welch-Satterthwaite degrees of freedom. Calibration: per score decile of the segment's users, the
mean score (the model's predicted purchase probability over its horizon) against the actual rate in
the window, with its Wilson interval. Every figure carries its interval and the users it rests on.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Protocol

import numpy as np
from numpy.typing import NDArray
from pydantic import Field

from shared.audiences.holdout import GROUP_HOLDOUT
from shared.errors import NotFound, PreconditionFailed
from shared.records.audiences import AudienceRecord
from shared.records.datasources import DatasetVersion
from shared.records.models import ModelRecord
from shared.wire_models import CamelModel

CONFIDENCE = 0.95
Z95 = 1.959963984540054
# Below these the normal approximations are not to be trusted: the report says "not enough data yet".
MIN_GROUP_USERS = 30
MIN_BUYERS = 10
DECILES = 10

Verdict = Literal["not_enough_data", "uplift", "downlift", "no_difference"]


class Estimate(CamelModel):
    """A figure with its 95 % interval, the users it rests on, and how the interval was computed."""

    value: float
    low: float
    high: float
    users: int
    method: str


class GroupResult(CamelModel):
    group: Literal["uploaded", "holdout"]
    users: int
    buyers: int
    purchase_rate: Estimate
    revenue_per_user: Estimate


class Difference(CamelModel):
    """Uploaded minus holdout."""

    purchase_rate: Estimate
    revenue_per_user: Estimate


class CalibrationDecile(CamelModel):
    decile: int = Field(description="1 holds the best-scored tenth of the segment.")
    users: int
    score_low: float
    score_high: float
    predicted_rate: float = Field(description="Mean score: the model's purchase probability (its horizon).")
    actual_rate: Estimate


class LiftReport(CamelModel):
    audience_id: str
    product_id: str
    dataset_version: str
    activated_at: datetime
    window_start: datetime
    window_end: datetime
    days: float = Field(
        description="Days of orders the report rests on (0 before any order after activation)."
    )
    orders_in_window: int
    holdout_percent: float
    holdout_seed: str = Field(description="A string of digits: it can exceed 2^53 (JavaScript numbers).")
    confidence: float = CONFIDENCE
    uploaded: GroupResult
    holdout: GroupResult
    difference: Difference
    verdict: Verdict
    summary: str = Field(description="The result in one plain sentence.")
    model_horizon_days: int | None = Field(
        default=None, description="The model predicts purchases within this many days."
    )
    calibration: list[CalibrationDecile]


# --- statistics (pure) ---------------------------------------------------------------------------


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a proportion (0, 1 for n = 0)."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def rate_difference(
    buyers_a: int, n_a: int, buyers_b: int, n_b: int, z: float = Z95
) -> tuple[float, float, float]:
    """p_a - p_b with Newcombe's hybrid score interval (Newcombe 1998, method 10), built from each
    rate's Wilson interval. Unlike the normal approximation it does not take a rate of 0 (or 1) as
    exact: a holdout where nobody bought yet leaves the difference as uncertain as that holdout is."""
    p_a, p_b = buyers_a / n_a, buyers_b / n_b
    low_a, high_a = wilson(buyers_a, n_a, z)
    low_b, high_b = wilson(buyers_b, n_b, z)
    diff = p_a - p_b
    return (
        diff,
        diff - math.sqrt((p_a - low_a) ** 2 + (high_b - p_b) ** 2),
        diff + math.sqrt((high_a - p_a) ** 2 + (p_b - low_b) ** 2),
    )


def t_quantile(df: float, z: float = Z95) -> float:
    """Student's t quantile matching the normal quantile ``z`` (Cornish-Fisher expansion in 1/df;
    within 0.2 % of the exact value for df >= 5)."""
    if not math.isfinite(df):
        return z
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    return z + g1 / df + g2 / df**2 + g3 / df**3


def mean_interval(values: NDArray[np.float64]) -> tuple[float, float, float]:
    """Mean with its t interval (0-wide for fewer than two values, which the report flags)."""
    n = values.size
    if n == 0:
        return 0.0, 0.0, 0.0
    mean = float(values.mean())
    if n < 2:
        return mean, mean, mean
    half = t_quantile(n - 1) * float(values.std(ddof=1)) / math.sqrt(n)
    return mean, mean - half, mean + half


def welch_difference(a: NDArray[np.float64], b: NDArray[np.float64]) -> tuple[float, float, float]:
    """mean(a) - mean(b) with Welch's interval (t at the Welch-Satterthwaite degrees of freedom)."""
    diff = float(a.mean() - b.mean())
    va, vb = float(a.var(ddof=1)) / a.size, float(b.var(ddof=1)) / b.size
    se = math.sqrt(va + vb)
    if se == 0.0:
        return diff, diff, diff
    df = (va + vb) ** 2 / (va**2 / (a.size - 1) + vb**2 / (b.size - 1))
    half = t_quantile(df) * se
    return diff, diff - half, diff + half


# --- the report ----------------------------------------------------------------------------------


class AudienceReader(Protocol):
    def get(self, org_id: str, audience_id: str) -> AudienceRecord | None: ...


class DatasetReader(Protocol):
    def current(self, org_id: str) -> DatasetVersion | None: ...


class BlobReader(Protocol):
    def get(self, key: str) -> bytes: ...
    def get_range(self, key: str, start: int, end: int) -> bytes: ...


class ModelReader(Protocol):
    def get(self, org_id: str, name: str) -> ModelRecord | None: ...


@dataclass(frozen=True)
class SegmentGroups:
    """The segment's users as split at activation: ids, scores and whether each was held out."""

    user_ids: list[str]
    scores: NDArray[np.float64]
    held_out: NDArray[np.bool_]


def read_groups(data: bytes) -> SegmentGroups:
    """The groups file written by SelectUsers (``user_id,score,group``), read a column at a time."""
    reader = csv.reader(io.StringIO(data.decode("utf-8")))
    header = next(reader, [])
    columns = list(zip(*reader, strict=True)) or [() for _ in header]
    at = {name: k for k, name in enumerate(header)}
    scores = np.asarray(columns[at["score"]], dtype=np.str_)
    scores = np.where(scores == "", "0", scores)
    return SegmentGroups(
        list(columns[at["user_id"]]),
        scores.astype(np.float64) if scores.size else np.zeros(0, dtype=np.float64),
        np.asarray(columns[at["group"]], dtype=np.str_) == GROUP_HOLDOUT,
    )


@dataclass(frozen=True)
class ProductOrders:
    """One product's order lines: each line's user (a position in ``user_ids``, the dataset's sorted
    user ids), time (epoch microseconds, UTC) and amount."""

    users: NDArray[np.int64]
    user_ids: NDArray[np.str_]
    times: NDArray[np.int64]
    amounts: NDArray[np.float64]

    def line_user_ids(self) -> list[str]:
        return self.user_ids[self.users].tolist()


def lift_report(
    record: AudienceRecord,
    groups: SegmentGroups,
    orders: ProductOrders,
    dataset: DatasetVersion,
    horizon_days: int | None = None,
) -> LiftReport:
    """The lift of ``record``'s uploaded group over its holdout in the segment product's ``orders``
    after the activation."""
    holdout, segment, activation = record.holdout, record.segment, record.activation
    assert holdout is not None
    assert segment is not None
    assert activation is not None
    assert activation.finished_at is not None
    start = activation.finished_at
    in_window = orders.times >= _micros(start)
    end = max(dataset.orders_end or start, start)
    days = max(0.0, (end - start).total_seconds() / 86_400)
    # Each segment user's position among the dataset's users, then each window line's segment user
    # (-1: a buyer outside the segment): integer lookups, no string per order line.
    n = len(groups.user_ids)
    known = orders.user_ids
    ids = np.asarray(groups.user_ids, dtype=np.str_)  # its own width: a longer id is never cut
    found = np.searchsorted(known, ids).clip(max=max(known.size - 1, 0))
    present = known[found] == ids if known.size else np.zeros(n, dtype=bool)
    member_of = np.full(known.size, -1, dtype=np.int64)
    member_of[found[present]] = np.flatnonzero(present)
    at = member_of[orders.users[in_window]]
    member = at >= 0
    spent = orders.amounts[in_window][member]
    revenue = np.bincount(at[member], weights=spent, minlength=n).astype(np.float64)
    bought = np.bincount(at[member], minlength=n) > 0
    uploaded_mask = ~groups.held_out
    uploaded = _group("uploaded", bought[uploaded_mask], revenue[uploaded_mask])
    held = _group("holdout", bought[groups.held_out], revenue[groups.held_out])
    difference = _difference(uploaded, held, revenue[uploaded_mask], revenue[groups.held_out])
    window_orders = int(np.count_nonzero(in_window))
    verdict, summary = _verdict(uploaded, held, difference, days, window_orders, start)
    return LiftReport(
        audience_id=record.audience_id,
        product_id=segment.product_id,
        dataset_version=dataset.version,
        activated_at=start,
        window_start=start,
        window_end=end,
        days=round(days, 2),
        orders_in_window=window_orders,
        holdout_percent=holdout.percent,
        holdout_seed=str(holdout.seed),
        uploaded=uploaded,
        holdout=held,
        difference=difference,
        verdict=verdict,
        summary=summary,
        model_horizon_days=horizon_days,
        calibration=calibration(groups.scores, bought),
    )


def read_product_orders(blobs: BlobReader, dataset: DatasetVersion, product_id: str) -> ProductOrders:
    """The product's order lines from the dataset's aggregates: the small index, then three ranged
    reads of ``order-lines.bin`` (users int32, times int64, amounts float64, each array whole after
    the other)."""
    with np.load(io.BytesIO(blobs.get(dataset.keys["aggregates"])), allow_pickle=False) as aggregates:
        product_ids = aggregates["product_ids"]
        offsets = aggregates["line_offsets"]
        lines = int(aggregates["lines"][0])
        user_ids = aggregates["user_ids"]
    at = int(np.searchsorted(product_ids, product_id))
    if at >= product_ids.size or product_ids[at] != product_id or offsets[at] == offsets[at + 1]:
        empty = np.zeros(0, dtype=np.int64)
        return ProductOrders(empty, user_ids, empty, empty.astype(np.float64))
    first, stop = int(offsets[at]), int(offsets[at + 1])
    key = dataset.keys["order_lines"]

    def part(base: int, width: int, dtype: str) -> NDArray[Any]:
        data = blobs.get_range(key, base + first * width, base + stop * width - 1)
        return np.frombuffer(data, dtype=dtype)

    return ProductOrders(
        users=part(0, 4, "<i4").astype(np.int64),
        user_ids=user_ids,
        times=part(4 * lines, 8, "<i8").astype(np.int64),
        amounts=part(12 * lines, 8, "<f8").astype(np.float64),
    )


def _micros(moment: datetime) -> int:
    return int(moment.timestamp() * 1_000_000)


def calibration(scores: NDArray[np.float64], bought: NDArray[np.bool_]) -> list[CalibrationDecile]:
    """Predicted (mean score) against actual purchase rate per score decile, best first."""
    order = np.argsort(-scores, kind="stable")
    deciles: list[CalibrationDecile] = []
    for number, part in enumerate(np.array_split(order, DECILES), start=1):
        if part.size == 0:
            continue
        buyers = int(bought[part].sum())
        low, high = wilson(buyers, int(part.size))
        deciles.append(
            CalibrationDecile(
                decile=number,
                users=int(part.size),
                score_low=float(scores[part].min()),
                score_high=float(scores[part].max()),
                predicted_rate=float(scores[part].mean()),
                actual_rate=Estimate(
                    value=buyers / part.size, low=low, high=high, users=int(part.size), method="wilson"
                ),
            )
        )
    return deciles


def _group(
    name: Literal["uploaded", "holdout"], bought: NDArray[np.bool_], revenue: NDArray[np.float64]
) -> GroupResult:
    n, buyers = int(bought.size), int(bought.sum())
    low, high = wilson(buyers, n)
    mean, mean_low, mean_high = mean_interval(revenue)
    return GroupResult(
        group=name,
        users=n,
        buyers=buyers,
        purchase_rate=Estimate(value=buyers / n if n else 0.0, low=low, high=high, users=n, method="wilson"),
        revenue_per_user=Estimate(value=mean, low=mean_low, high=mean_high, users=n, method="student_t"),
    )


def _difference(
    uploaded: GroupResult, held: GroupResult, revenue_a: NDArray[np.float64], revenue_b: NDArray[np.float64]
) -> Difference:
    users = uploaded.users + held.users
    rate, rate_low, rate_high = rate_difference(uploaded.buyers, uploaded.users, held.buyers, held.users)
    spend, spend_low, spend_high = welch_difference(revenue_a, revenue_b)
    return Difference(
        purchase_rate=Estimate(
            value=rate, low=rate_low, high=rate_high, users=users, method="newcombe_wilson"
        ),
        revenue_per_user=Estimate(value=spend, low=spend_low, high=spend_high, users=users, method="welch_t"),
    )


def _verdict(
    uploaded: GroupResult,
    held: GroupResult,
    difference: Difference,
    days: float,
    orders: int,
    start: datetime,
) -> tuple[Verdict, str]:
    sizes = f"{uploaded.users} uploaded and {held.users} held-out users over {days:.1f} days"
    if orders == 0 or days == 0:
        return "not_enough_data", (
            f"Not enough data yet: no order of the product was synced after the activation on "
            f"{start:%Y-%m-%d}; sync the shop's orders again later."
        )
    if min(uploaded.users, held.users) < MIN_GROUP_USERS or uploaded.buyers + held.buyers < MIN_BUYERS:
        return "not_enough_data", (
            f"Not enough data yet: {uploaded.buyers + held.buyers} buyers among {sizes}; the report needs "
            f"at least {MIN_BUYERS} buyers and {MIN_GROUP_USERS} users in each group."
        )
    rate = difference.purchase_rate
    figures = (
        f"purchase rate {_pct(uploaded.purchase_rate.value)} uploaded vs {_pct(held.purchase_rate.value)} "
        f"held out, a difference of {_points(rate.value)} (95 % interval {_points(rate.low)} to "
        f"{_points(rate.high)}), from {sizes}"
    )
    if rate.low > 0:
        return "uplift", f"The uploaded group bought more: {figures}."
    if rate.high < 0:
        return "downlift", f"The uploaded group bought less: {figures}."
    # The interval covers zero: informative only once it is narrower than the holdout's own rate.
    if rate.high - rate.low <= max(held.purchase_rate.value, 1e-9):
        return "no_difference", f"No difference found yet: {figures}."
    return "not_enough_data", f"Not enough data yet: the interval is still wide; {figures}."


def _pct(value: float) -> str:
    return f"{100 * value:.1f} %"


def _points(value: float) -> str:
    return f"{100 * value:+.1f} points"


@dataclass(frozen=True)
class LiftService:
    """``GET /platform-ads/audiences/{audienceId}/lift``: the report from the stored groups and the
    current dataset's orders."""

    audiences: AudienceReader
    datasets: DatasetReader
    blobs: BlobReader
    models: ModelReader

    def report(self, org_id: str, audience_id: str) -> LiftReport:
        record = self.audiences.get(org_id, audience_id)
        if record is None:
            raise NotFound(
                f"Audience {audience_id} was not found.", remedy="List audiences to see their ids."
            )
        if record.holdout is None or record.segment is None:
            raise PreconditionFailed(
                "This audience has no holdout, so its lift cannot be measured.",
                field="audienceId",
                remedy="Create the audience from a segment with holdoutPercent above 0 (10 by default).",
            )
        activation = record.activation
        if activation is None or activation.finished_at is None or record.status != "active":
            raise PreconditionFailed(
                "The audience is not active yet: lift is measured from the orders after its activation.",
                field="audienceId",
                remedy="Wait for the activation to finish, then sync the shop's orders.",
            )
        dataset = self.datasets.current(org_id)
        if dataset is None:
            raise PreconditionFailed(
                "No data source has been synced.", field="audienceId", remedy="Sync the shop's orders."
            )
        if "aggregates" not in dataset.keys:
            raise PreconditionFailed(
                "The data in force was synced before orders were kept for reports.",
                field="audienceId",
                remedy="Sync the shop's orders again, then read the report.",
            )
        orders = read_product_orders(self.blobs, dataset, record.segment.product_id)
        groups = read_groups(self.blobs.get(record.holdout.groups_key))
        if int(groups.held_out.sum()) < 2 or int((~groups.held_out).sum()) < 2:
            raise PreconditionFailed(
                "The segment is too small to compare: each group needs at least two users.",
                field="audienceId",
                remedy="Measure lift on a larger segment.",
            )
        model = self.models.get(org_id, record.segment.model_name)
        horizon = model.horizon_days if model is not None else None
        return lift_report(record, groups, orders, dataset, horizon)
