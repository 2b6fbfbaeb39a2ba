"""The lift report: a synthetic shop with a planted effect for the uploaded group finds it within its
interval; a shop with none shows none; every figure carries its interval and sample size."""

from __future__ import annotations

import io
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from shared.activation.users_files import groups_csv
from shared.audiences.holdout import split_holdout
from shared.audiences.identifiers import AudienceUser
from shared.audiences.lift import (
    LiftService,
    ProductOrders,
    SegmentGroups,
    lift_report,
    rate_difference,
    t_quantile,
    welch_difference,
    wilson,
)
from shared.errors import PreconditionFailed
from shared.ml.datasets import OrderRecord
from shared.records.audiences import ActivationRecord, AudienceRecord, HoldoutRecord, SegmentProvenance
from shared.records.datasources import DatasetVersion
from shared.records.models import ModelRecord

ACTIVATED = datetime(2026, 10, 1, tzinfo=UTC)
PRODUCT = "p00001"


@dataclass
class Shop:
    record: AudienceRecord
    groups: SegmentGroups
    lines: list[OrderRecord]
    dataset: DatasetVersion
    users: list[AudienceUser]

    @property
    def orders(self) -> ProductOrders:
        """The segment product's order lines, as the report reads them."""
        return product_orders(self.lines, PRODUCT)


def product_orders(lines: list[OrderRecord], product_id: str) -> ProductOrders:
    mine = [line for line in lines if line.product_id == product_id]
    user_ids = np.array(sorted({line.user_id for line in lines}), dtype=np.str_)
    return ProductOrders(
        users=np.searchsorted(user_ids, [line.user_id for line in mine]).astype(np.int64),
        user_ids=user_ids,
        times=np.array([int(line.timestamp.timestamp() * 1_000_000) for line in mine], dtype=np.int64),
        amounts=np.array([line.amount for line in mine], dtype=np.float64),
    )


def stored_aggregates(lines: list[OrderRecord]) -> dict[str, bytes]:
    """``aggregates.npz`` and ``order-lines.bin`` as docs/data-plane.md lays them out (the sync writes
    them; tests/unit/datasources checks it does so)."""
    user_ids = np.array(sorted({line.user_id for line in lines}), dtype=np.str_)
    product_ids = np.array(sorted({line.product_id for line in lines}), dtype=np.str_)
    ordered = sorted(lines, key=lambda line: (line.product_id, line.timestamp))
    product = np.searchsorted(product_ids, [line.product_id for line in ordered])
    offsets = np.concatenate([[0], np.cumsum(np.bincount(product, minlength=product_ids.size))])
    users = np.searchsorted(user_ids, [line.user_id for line in ordered]).astype("<i4")
    times = np.array([int(line.timestamp.timestamp() * 1_000_000) for line in ordered], dtype="<i8")
    amounts = np.array([line.amount for line in ordered], dtype="<f8")
    buffer = io.BytesIO()
    np.savez(
        buffer,
        user_ids=user_ids,
        product_ids=product_ids,
        line_offsets=offsets.astype(np.int64),
        lines=np.array([len(ordered)], dtype=np.int64),
    )
    return {
        "datasets/org-1/v2/aggregates.npz": buffer.getvalue(),
        "datasets/org-1/v2/order-lines.bin": users.tobytes() + times.tobytes() + amounts.tobytes(),
    }


def synthetic_shop(n: int, uplift: float, seed: int, revenue_uplift: float = 0.0) -> Shop:
    """``n`` segment users with calibrated scores; over 28 days after activation each buys the product
    with probability score (+ ``uplift`` if uploaded), spending lognormal amounts (+ ``revenue_uplift``
    per buying uploaded user); orders before the activation and of other products are noise."""
    rng = np.random.default_rng(seed)
    ids = [f"u{i:06d}" for i in range(n)]
    scores = rng.beta(1.5, 8.0, size=n)
    split = split_holdout(ids, scores.tolist(), 10, seed=seed)
    held = np.array(split.held_out)
    probability = np.clip(scores + np.where(held, 0.0, uplift), 0, 1)
    bought = rng.random(n) < probability
    orders: list[OrderRecord] = []
    for i in np.flatnonzero(bought):
        amount = float(rng.lognormal(3.0, 0.5)) + (0.0 if held[i] else revenue_uplift)
        at = ACTIVATED + timedelta(days=float(rng.uniform(0, 28)))
        orders.append(_order(f"o{i}", ids[i], PRODUCT, amount, at))
    for i in rng.choice(n, size=n // 5, replace=False):  # before the activation: not counted
        orders.append(_order(f"b{i}", ids[i], PRODUCT, 50.0, ACTIVATED - timedelta(days=3)))
    for i in rng.choice(n, size=n // 5, replace=False):  # another product: not counted
        orders.append(_order(f"x{i}", ids[i], "p00002", 50.0, ACTIVATED + timedelta(days=2)))
    users = [AudienceUser(user_id=ids[i], score=float(scores[i])) for i in range(n)]
    dataset = DatasetVersion(
        org_id="org-1",
        version="v2",
        created_at=ACTIVATED + timedelta(days=28),
        keys={
            "aggregates": "datasets/org-1/v2/aggregates.npz",
            "order_lines": "datasets/org-1/v2/order-lines.bin",
        },
        row_counts={},
        rows_read={},
        rejected_count=0,
        rejected_rows_accepted=False,
        orders_end=ACTIVATED + timedelta(days=28),
    )
    record = _record(split.seed, split.uploaded_count, split.holdout_count)
    return Shop(record, SegmentGroups(ids, scores, held), orders, dataset, users)


def _order(order_id: str, user_id: str, product_id: str, amount: float, at: datetime) -> OrderRecord:
    return OrderRecord(
        order_id=order_id, user_id=user_id, product_id=product_id, quantity=1, amount=amount, timestamp=at
    )


def _record(seed: int, uploaded: int, holdout: int, status: str = "active") -> AudienceRecord:
    return AudienceRecord(
        org_id="org-1",
        audience_id="aud-1",
        name="Likely buyers",
        objective="retargeting",
        status=status,
        ad_account_id="act_1",
        created_at=ACTIVATED,
        updated_at=ACTIVATED,
        segment=SegmentProvenance(
            model_name="shop-purchase",
            model_version="m1",
            dataset_version="v1",
            product_id=PRODUCT,
            rule="top_n",
            value=20_000,
            users_selected=20_000,
            users_without_customer_row=0,
        ),
        holdout=HoldoutRecord(
            percent=10, seed=seed, uploaded_users=uploaded, holdout_users=holdout, groups_key="g/groups.csv"
        ),
        activation=ActivationRecord(
            started_at=ACTIVATED - timedelta(minutes=5), updated_at=ACTIVATED, finished_at=ACTIVATED
        ),
    )


def test_a_planted_uplift_is_found_within_the_interval() -> None:
    # Given a shop where uploaded users buy 4 points more often than the holdout
    shop = synthetic_shop(20_000, uplift=0.04, seed=21)

    # When the report is built from the orders after the activation
    report = lift_report(shop.record, shop.groups, shop.orders, shop.dataset)

    # Then the difference's interval excludes zero and covers the planted 4 points
    rate = report.difference.purchase_rate
    assert rate.low > 0
    assert rate.low <= 0.04 <= rate.high
    assert report.verdict == "uplift"
    assert report.summary.startswith("The uploaded group bought more")
    # and it rests on both groups and the 28 days after the activation
    assert report.uploaded.users == 18_000
    assert report.holdout.users == 2_000
    assert rate.users == 20_000
    assert 27.0 < report.days <= 28.0


def test_a_planted_revenue_uplift_is_found_within_welchs_interval() -> None:
    # Given uploaded buyers spend 10 more per order on top of a 4-point purchase uplift
    shop = synthetic_shop(20_000, uplift=0.04, seed=8, revenue_uplift=10.0)
    report = lift_report(shop.record, shop.groups, shop.orders, shop.dataset)

    # Then revenue per user is higher in the uploaded group, by what was planted (computed from the
    # same shop's expected values: p_u * (mean + 10) - p_h * mean, mean of lognormal(3, 0.5))
    mean = float(np.exp(3.0 + 0.5**2 / 2))
    scores, held = shop.groups.scores, shop.groups.held_out
    planted = float(np.mean(np.clip(scores[~held] + 0.04, 0, 1)) * (mean + 10) - np.mean(scores[held]) * mean)
    spend = report.difference.revenue_per_user
    assert spend.low > 0
    assert spend.low <= planted <= spend.high
    assert spend.method == "welch_t"


@pytest.mark.parametrize("seed", [3, 4, 5])
def test_with_no_uplift_the_interval_covers_zero(seed: int) -> None:
    # Given a shop where being uploaded changes nothing
    shop = synthetic_shop(20_000, uplift=0.0, seed=seed)

    # When the report is built
    report = lift_report(shop.record, shop.groups, shop.orders, shop.dataset)

    # Then both intervals cover zero and the report claims no lift
    assert report.difference.purchase_rate.low <= 0 <= report.difference.purchase_rate.high
    assert report.difference.revenue_per_user.low <= 0 <= report.difference.revenue_per_user.high
    assert report.verdict in {"no_difference", "not_enough_data"}


def test_the_nominal_coverage_holds_over_many_shops() -> None:
    # Given 200 small shops with no effect, then 200 with a planted 5 points
    def covered(uplift: float, seed: int) -> bool:
        shop = synthetic_shop(2_000, uplift=uplift, seed=seed)
        rate = lift_report(shop.record, shop.groups, shop.orders, shop.dataset).difference.purchase_rate
        return rate.low <= uplift <= rate.high

    # When each report's interval is checked against the truth
    null_coverage = np.mean([covered(0.0, s) for s in range(200)])
    effect_coverage = np.mean([covered(0.05, s) for s in range(200, 400)])

    # Then about 95 % of intervals cover the true effect (binomial 95 % band for 200 shops: 0.92-0.98)
    assert 0.91 <= null_coverage <= 0.99
    assert 0.91 <= effect_coverage <= 0.99


def test_before_any_order_after_the_activation_the_report_says_not_enough_data() -> None:
    # Given only orders from before the activation
    shop = synthetic_shop(2_000, uplift=0.04, seed=1)
    before = [o for o in shop.lines if o.timestamp < ACTIVATED]
    dataset = shop.dataset.model_copy(update={"orders_end": ACTIVATED - timedelta(days=3)})

    # When the report is built
    report = lift_report(shop.record, shop.groups, product_orders(before, PRODUCT), dataset)

    # Then it says so plainly, and still gives each group's size with its figures
    assert report.verdict == "not_enough_data"
    assert report.summary.startswith("Not enough data yet")
    assert report.days == 0
    assert report.holdout.users == 200
    assert report.holdout.purchase_rate.users == 200


def test_every_figure_carries_its_interval_and_sample_size() -> None:
    shop = synthetic_shop(5_000, uplift=0.02, seed=2)
    report = lift_report(shop.record, shop.groups, shop.orders, shop.dataset)
    estimates = [
        report.uploaded.purchase_rate,
        report.uploaded.revenue_per_user,
        report.holdout.purchase_rate,
        report.holdout.revenue_per_user,
        report.difference.purchase_rate,
        report.difference.revenue_per_user,
        *(d.actual_rate for d in report.calibration),
    ]
    for estimate in estimates:
        assert estimate.low <= estimate.value <= estimate.high
        assert estimate.users > 0
        assert estimate.method


def test_calibration_compares_predicted_and_actual_rates_by_score_decile() -> None:
    # Given a calibrated model (a user buys with probability its score) and no uplift
    shop = synthetic_shop(20_000, uplift=0.0, seed=9)

    # When the report is built
    calibration = lift_report(shop.record, shop.groups, shop.orders, shop.dataset).calibration

    # Then ten deciles, best first, hold every user, and each decile's actual rate is near its predicted
    assert [d.decile for d in calibration] == list(range(1, 11))
    assert sum(d.users for d in calibration) == 20_000
    assert calibration[0].predicted_rate > calibration[-1].predicted_rate
    near = [d.actual_rate.low - 0.01 <= d.predicted_rate <= d.actual_rate.high + 0.01 for d in calibration]
    assert sum(near) >= 9


def test_the_statistics_match_known_values() -> None:
    # Wilson interval of 10/100 (Newcombe 1998, table I): 0.0552 to 0.1744
    low, high = wilson(10, 100)
    assert (round(low, 4), round(high, 4)) == (0.0552, 0.1744)
    # t quantile (0.975) for 10 and 30 degrees of freedom: 2.228 and 2.042
    assert t_quantile(10) == pytest.approx(2.228, abs=0.005)
    assert t_quantile(30) == pytest.approx(2.042, abs=0.002)
    # difference of rates: Newcombe's hybrid score interval (Newcombe 1998, table II, method 10)
    for (a, n_a, b, n_b), (expected_low, expected_high) in {
        (56, 70, 48, 80): (0.0524, 0.3339),
        (9, 10, 3, 10): (0.1705, 0.8090),
        (5, 56, 0, 29): (-0.0381, 0.1926),
        (0, 10, 0, 20): (-0.1611, 0.2775),
        (10, 10, 0, 20): (0.6791, 1.0000),
    }.items():
        diff, d_low, d_high = rate_difference(a, n_a, b, n_b)
        assert diff == pytest.approx(a / n_a - b / n_b)
        assert (round(d_low, 4), round(d_high, 4)) == (expected_low, expected_high)
    # Welch: equal samples shifted by 1
    a = np.arange(10, dtype=np.float64)
    mean, w_low, w_high = welch_difference(a + 1, a)
    assert mean == pytest.approx(1.0)
    assert w_low < 0 < w_high


def test_a_holdout_where_nobody_bought_is_no_proof_of_uplift() -> None:
    # Given 20 of 360 uploaded users bought and none of the 40 held out (a rate of 0 out of 40 is
    # still consistent with the uploaded group's 5.6 %: its own interval reaches 8.8 %)
    diff, low, high = rate_difference(20, 360, 0, 40)

    # Then the difference's interval covers zero: the normal approximation took the holdout's 0 as
    # exact and gave 3.2 to 7.9 points, an "uplift" the data does not show
    assert diff == pytest.approx(20 / 360)
    assert low < 0 < high
    # And with no buyer on either side (before any order after the activation) the interval is as
    # wide as the groups' own, not 0 to 0
    _, low, high = rate_difference(0, 180, 0, 20)
    assert (low, high) == (pytest.approx(-wilson(0, 20)[1]), pytest.approx(wilson(0, 180)[1]))


@dataclass
class _Audiences:
    record: AudienceRecord | None

    def get(self, org_id: str, audience_id: str) -> AudienceRecord | None:
        return self.record


@dataclass
class _Datasets:
    dataset: DatasetVersion | None

    def current(self, org_id: str) -> DatasetVersion | None:
        return self.dataset


@dataclass
class _Blobs:
    files: dict[str, bytes]

    def get(self, key: str) -> bytes:
        return self.files[key]

    def get_range(self, key: str, start: int, end: int) -> bytes:
        return self.files[key][start : end + 1]


class _Models:
    def get(self, org_id: str, name: str) -> ModelRecord | None:
        return None


def test_the_service_reads_the_stored_groups_and_the_current_orders() -> None:
    # Given the stored groups file and the current dataset's aggregates and order lines by product
    shop = synthetic_shop(20_000, uplift=0.04, seed=21)
    groups = ["holdout" if h else "uploaded" for h in shop.groups.held_out.tolist()]
    blobs = _Blobs({"g/groups.csv": groups_csv(shop.users, groups), **stored_aggregates(shop.lines)})
    service = LiftService(_Audiences(shop.record), _Datasets(shop.dataset), blobs, _Models())

    # When the report is asked for
    report = service.report("org-1", "aud-1")

    # Then it is the report of the shop's orders
    assert report == lift_report(shop.record, shop.groups, shop.orders, shop.dataset)
    assert report.verdict == "uplift"


def test_an_audience_without_a_holdout_has_no_lift_report() -> None:
    record = _record(1, 100, 0).model_copy(update={"holdout": None})
    service = LiftService(_Audiences(record), _Datasets(None), _Blobs({}), _Models())
    with pytest.raises(PreconditionFailed) as caught:
        service.report("org-1", "aud-1")
    assert caught.value.remedy is not None
    assert "holdoutPercent" in caught.value.remedy


def test_an_audience_still_activating_has_no_lift_report_yet() -> None:
    record = _record(1, 90, 10, status="uploading")
    service = LiftService(_Audiences(record), _Datasets(None), _Blobs({}), _Models())
    with pytest.raises(PreconditionFailed, match="not active yet"):
        service.report("org-1", "aud-1")


def test_a_segment_user_is_matched_to_order_lines_by_the_whole_id() -> None:
    # Given order lines of u1 only, and a segment where u10 and u100 (ids u1 is a prefix of) are uploaded
    lines = [_order("o1", "u1", PRODUCT, 20.0, ACTIVATED + timedelta(days=1))]
    shop = synthetic_shop(40, uplift=0.0, seed=2)
    ids = ["u10", "u100", "u2", "u1", "u3", "u4"]
    groups = SegmentGroups(ids, np.linspace(0.9, 0.4, 6), np.array([False, False, False, True, True, True]))

    # When the report is built
    report = lift_report(shop.record, groups, product_orders(lines, PRODUCT), shop.dataset)

    # Then only u1, held out, bought
    assert (report.uploaded.buyers, report.holdout.buyers) == (0, 1)
    assert report.holdout.revenue_per_user.value == pytest.approx(20.0 / 3)
