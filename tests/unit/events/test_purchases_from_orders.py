"""Purchases from the shop's own orders at each sync (issue 21, item 2): the new orders of a dataset
version, inside the window, go to the pixel once, through the engine and the in-process sandbox."""

from __future__ import annotations

import shutil
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from shared.dataplane.engine import session
from shared.errors import NotFound
from shared.events.purchases import PurchaseEvents
from shared.platform.client import GraphClient
from shared.platform.errors import PlatformError
from shared.platform.retry import may_have_executed
from shared.records.connections import Connection
from shared.records.datasources import DatasetVersion
from shared.records.events import PurchaseSend
from shared.records.models import ModelRecord
from tests.unit.sandbox_platform import AD_ACCOUNT_ID, SandboxPlatform

NOW = datetime.now(UTC).replace(microsecond=0)
PIXEL = "30000000000000001"
Order = tuple[str, str, str, int, float, datetime]  # order id, user, product, quantity, amount, time
CUSTOMERS = [
    ("c-1", "mary@example.com", "+44 7700 900123", "Mary", "Smith", "GB", None, None),
    ("c-2", "bob@example.com", None, "Bob", None, "US", "California", True),
    ("c-3", None, None, None, None, None, None, None),
]


@dataclass
class MemoryEvents:
    """The event store as a dict, with the repository's pointer rules."""

    records: dict[str, PurchaseSend] = field(default_factory=dict)
    sent_through: str | None = None
    part_sent: str | None = None
    # What the step counted per day, written with its progress: (org, day) -> {(source, event, outcome)}.
    counted: dict[tuple[str, str], Counter[tuple[str, str, str]]] = field(default_factory=dict)

    def get_purchases(self, org_id: str, version: str) -> PurchaseSend | None:
        record = self.records.get(version)
        return record.model_copy(deep=True) if record else None

    def put_purchases(self, record: PurchaseSend) -> None:
        self.records[record.dataset_version] = record.model_copy(deep=True)

    def put_purchases_counted(
        self, record: PurchaseSend, day: str, counts: dict[tuple[str, str, str], int]
    ) -> None:
        self.put_purchases(record)
        self.counted.setdefault((record.org_id, day), Counter()).update(counts)

    def finish_purchases(self, record: PurchaseSend) -> None:
        self.put_purchases(record)
        if self.sent_through is None or self.sent_through < record.dataset_version:
            self.sent_through, self.part_sent = record.dataset_version, None

    def mark_part_sent(self, org_id: str, version: str) -> None:
        self.part_sent = version

    def pointers(self, org_id: str) -> tuple[str | None, str | None]:
        return self.sent_through, self.part_sent


class Shop:
    """Dataset versions as Parquet files written by the engine, and the rest of the step's world."""

    def __init__(self, tmp: Path, platform: SandboxPlatform) -> None:
        self.tmp = tmp
        self.platform = platform
        self.versions: dict[str, DatasetVersion] = {}
        self.events = MemoryEvents()
        self.token = platform.user_token()
        self.connected = True
        # What the step counted per day: (org, day) -> {(source, event name, outcome): count}.
        self.counted = self.events.counted

    def sync(self, version: str, orders: list[Order], *, refused: tuple[str, ...] = ()) -> None:
        """Store a version with ``orders``; the customers of ``refused`` said no to marketing (without
        any, the customers file has no marketing_consent column, as versions stored before it)."""
        folder = self.tmp / version
        folder.mkdir()
        with session() as workspace:
            connection = workspace.connection
            connection.execute(
                "CREATE TABLE o (order_id VARCHAR, user_id VARCHAR, product_id VARCHAR, quantity INTEGER, "
                'amount DOUBLE, "timestamp" TIMESTAMP)'
            )
            for order in orders:
                connection.execute(
                    "INSERT INTO o VALUES (?, ?, ?, ?, ?, ?)", [*order[:5], order[5].replace(tzinfo=None)]
                )
            connection.execute(
                'COPY (SELECT * FROM o ORDER BY "timestamp") TO $path (FORMAT parquet)',
                {"path": str(folder / "orders.parquet")},
            )
            connection.execute(
                "CREATE TABLE c (user_id VARCHAR, email VARCHAR, first_name VARCHAR, last_name VARCHAR, "
                "phone VARCHAR, country VARCHAR, state VARCHAR, limited_data_use BOOLEAN)"
            )
            for user_id, email, phone, first, last, country, state, ldu in CUSTOMERS:
                connection.execute(
                    "INSERT INTO c VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [user_id, email, first, last, phone, country, state, ldu],
                )
            if refused:
                connection.execute(
                    "ALTER TABLE c ADD COLUMN marketing_consent BOOLEAN DEFAULT NULL; "
                    "UPDATE c SET marketing_consent = list_contains($refused, user_id) = FALSE",
                    {"refused": list(refused)},
                )
            connection.execute(
                "COPY c TO $path (FORMAT parquet)", {"path": str(folder / "customers.parquet")}
            )
        self.versions[version] = DatasetVersion(
            org_id="org-1",
            version=version,
            created_at=NOW,
            keys={"orders": f"{version}/orders.parquet", "customers": f"{version}/customers.parquet"},
            row_counts={},
            rows_read={},
            rejected_count=0,
            rejected_rows_accepted=False,
        )

    # The step's collaborators -----------------------------------------------------------------------

    def get(self, org_id: str, version: str) -> DatasetVersion | None:
        return self.versions.get(version)

    def download(self, key: str, path: Path) -> None:
        shutil.copyfile(self.tmp / key, path)

    def client_for(self, org_id: str) -> tuple[Connection, GraphClient]:
        if not self.connected:
            raise NotFound(
                "The organization is not connected to the advertising platform.", remedy="Connect."
            )
        connection = Connection(org_id=org_id, status="active", ad_account_id=AD_ACCOUNT_ID, currency="GBP")
        return connection, self.platform.graph(self.token)

    def record_usage(self, org_id: str, graph: GraphClient) -> None:
        pass

    def step(
        self,
        version: str,
        *,
        batch_size: int = 1000,
        seconds_left: Callable[[], float] = lambda: 600.0,
        model: ModelRecord | None = None,
        bundle: object | None = None,
    ) -> Any:
        service = PurchaseEvents(
            events=self.events,
            datasets=self,
            blobs=self,
            connections=self,
            session=session,
            clock=lambda: NOW,
            batch_size=batch_size,
            models=One(model),
            bundles=One(bundle),
            counted=True,
        )
        return service.step("org-1", version, seconds_left)

    def pixel(self) -> dict[str, Any]:
        held: dict[str, Any] = self.platform.admin("GET", f"/pixels/{PIXEL}/events")
        return held

    def sent_ids(self) -> list[str]:
        return [entry["event"]["event_id"] for entry in self.pixel()["events"]]


class One:
    """A model store or bundle source that holds one thing (or nothing)."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def get(self, org_id: str, name: str) -> Any:
        return self.value if name == "shop-purchase" else None

    def bundle_for(self, record: ModelRecord) -> Any:
        if self.value is None:
            raise FileNotFoundError(record.bundle_key)
        return self.value


class KnownBundle:
    """A purchase model's bundle whose probabilities are set by the test: ``(user, product) ->
    probability``, each user's spend and orders as of training."""

    def __init__(self, probabilities: dict[tuple[str, str], float], history: dict[str, tuple[float, int]]):
        self.probabilities = probabilities
        self.users = sorted(history)
        self.history = history

    def user_positions(self, user_ids: list[str]) -> np.ndarray:
        return np.array([self.users.index(u) if u in self.users else -1 for u in user_ids], dtype=np.int64)

    def score_pairs(self, user_ids: list[str], product_ids: list[str]) -> np.ndarray:
        return np.array(
            [
                self.probabilities.get((u, p), 0.0) if u in self.users else np.nan
                for u, p in zip(user_ids, product_ids, strict=True)
            ]
        )

    def spend_and_orders(self) -> tuple[np.ndarray, np.ndarray]:
        return (
            np.array([float(self.history[u][0]) for u in self.users]),
            np.array([float(self.history[u][1]) for u in self.users]),
        )


@pytest.fixture
def shop(tmp_path: Path) -> Shop:
    return Shop(tmp_path, SandboxPlatform())


def ago(**delta: float) -> datetime:
    return NOW - timedelta(**delta)


FIRST: list[Order] = [
    ("o-old", "c-1", "sku-1", 1, 10.0, ago(days=10)),
    ("o-1", "c-1", "sku-1", 2, 30.0, ago(days=2)),
    ("o-1", "c-1", "sku-2", 1, 5.5, ago(days=2)),
    ("o-2", "c-2", "sku-2", 1, 12.0, ago(hours=5)),
    ("o-3", "c-3", "sku-3", 3, 9.0, ago(hours=1)),
]


def test_a_first_sync_sends_its_orders_in_the_window_once_and_skips_the_older_ones(shop: Shop) -> None:
    # Given a first sync with three recent orders (one of two lines) and one ten days old
    shop.sync("v1", FIRST)
    # When its purchases step runs
    progress = shop.step("v1")
    # Then the three recent orders reach the pixel as purchases, in time order, the old one skipped
    assert progress.status == "done"
    assert shop.sent_ids() == ["o-1", "o-2", "o-3"]
    record = shop.events.records["v1"]
    assert (record.state, record.new_orders, record.in_window, record.outside_window) == ("sent", 4, 3, 1)
    assert (record.sent, record.calls, record.rejected) == (3, 1, 0)
    assert shop.events.pointers("org-1") == ("v1", None)


def test_a_purchase_carries_the_orders_value_products_and_customer(shop: Shop) -> None:
    shop.sync("v1", FIRST)
    shop.step("v1")
    events = {entry["event"]["event_id"]: entry["event"] for entry in shop.pixel()["events"]}
    first = events["o-1"]
    assert first["event_name"] == "Purchase"
    assert first["action_source"] == "other"
    assert first["event_time"] == int(ago(days=2).timestamp())
    assert first["custom_data"]["value"] == 35.5
    assert first["custom_data"]["currency"] == "GBP"
    assert first["custom_data"]["contents"] == [
        {"id": "sku-1", "quantity": 2, "item_price": 15.0},
        {"id": "sku-2", "quantity": 1, "item_price": 5.5},
    ]
    assert first["user_data"]["external_id"] == ["c-1"]
    assert len(first["user_data"]["em"][0]) == 64
    # the Californian who asked for Limited Data Use carries the options; the others say "not limited"
    assert events["o-2"]["data_processing_options"] == ["LDU"]
    assert events["o-2"]["data_processing_options_state"] == 1000
    assert events["o-1"]["data_processing_options"] == []
    # a customer without e-mail or phone is sent with their customer id alone
    assert events["o-3"]["user_data"] == {"external_id": ["c-3"]}


def test_a_second_sync_sends_only_the_orders_new_since_the_first(shop: Shop) -> None:
    # Given a first sync sent, then a second whose file has the same orders and one more
    shop.sync("v1", FIRST)
    shop.step("v1")
    shop.sync("v2", [*FIRST, ("o-4", "c-2", "sku-1", 1, 15.0, ago(minutes=10))])
    # When the second's purchases step runs
    shop.step("v2")
    # Then only the new order is sent, and nothing counted twice
    assert shop.sent_ids() == ["o-1", "o-2", "o-3", "o-4"]
    assert shop.pixel()["deduplicated"] == 0
    record = shop.events.records["v2"]
    assert (record.since_version, record.new_orders, record.sent) == ("v1", 1, 1)


def test_a_step_run_again_for_a_sent_version_sends_nothing(shop: Shop) -> None:
    shop.sync("v1", FIRST)
    shop.step("v1")
    assert shop.step("v1").status == "done"
    assert shop.pixel()["received"] == 3


def test_a_step_out_of_time_stops_between_batches_and_the_next_resumes(shop: Shop) -> None:
    # Given batches of one order and an invocation with time for one batch only
    shop.sync("v1", FIRST)
    times = iter([600.0, 5.0])
    # When the step runs, then runs again
    first = shop.step("v1", batch_size=1, seconds_left=lambda: next(times, 5.0))
    second = shop.step("v1", batch_size=1)
    # Then the first sent one order and said to go on; the second sent the others, none twice
    assert (first.status, first.position) == ("sending", 1)
    assert second.status == "done"
    assert shop.sent_ids() == ["o-1", "o-2", "o-3"]
    assert shop.pixel()["deduplicated"] == 0


def test_a_step_killed_after_a_batch_resumes_and_the_resent_batch_counts_once(shop: Shop) -> None:
    # Given the platform's answer to the second batch lost, and not recovered by the client's retry
    shop.sync("v1", FIRST)
    shop.platform.fault(kind="lost_answer", method="POST", path="/events$", after=1, count=2)
    # When the step runs (and fails), then runs again as the state machine's Retry does
    with pytest.raises(PlatformError) as raised:
        shop.step("v1", batch_size=1)
    assert may_have_executed(raised.value)
    assert (shop.events.records["v1"].state, shop.events.records["v1"].position) == ("sending", 1)
    assert shop.step("v1", batch_size=1).status == "done"
    # Then every order counts once on the pixel, though one batch arrived three times
    held = shop.pixel()
    assert held["counts"] == {"Purchase": 3}
    assert held["deduplicated"] == 2


def test_an_organization_not_connected_stops_with_the_remedy_and_a_later_sync_sends_its_orders(
    shop: Shop,
) -> None:
    # Given a sync while not connected
    shop.sync("v1", FIRST)
    shop.connected = False
    shop.step("v1")
    record = shop.events.records["v1"]
    assert record.state == "stopped"
    assert record.error is not None
    assert record.error["remedy"] == "Connect."
    # When the organization connects and syncs again
    shop.connected = True
    shop.sync("v2", FIRST)
    shop.step("v2")
    # Then the orders of both syncs still in the window go once
    assert shop.sent_ids() == ["o-1", "o-2", "o-3"]
    assert shop.events.records["v2"].since_version is None


def test_a_version_stopped_part_way_is_finished_before_the_next_one_and_nothing_goes_twice(
    shop: Shop,
) -> None:
    # Given a first sync whose token is revoked after its first batch
    shop.sync("v1", FIRST)
    shop.platform.fault(kind="revoke_token", method="POST", path="/events$", after=1, subcode=460)
    shop.step("v1", batch_size=1)
    assert (shop.events.records["v1"].state, shop.events.records["v1"].position) == ("stopped", 1)
    # When the merchant reconnects and a second sync, with one more order, runs
    shop.token = shop.platform.user_token()
    shop.sync("v2", [*FIRST, ("o-4", "c-2", "sku-1", 1, 15.0, ago(minutes=10))])
    shop.step("v2", batch_size=1)
    # Then the first version's other orders went, then the second's new one, each once
    assert shop.sent_ids() == ["o-1", "o-2", "o-3", "o-4"]
    assert shop.pixel()["deduplicated"] == 0
    assert shop.events.pointers("org-1") == ("v2", None)
    assert shop.events.records["v2"].since_version == "v1"


def test_throttling_answers_waiting_with_the_platforms_wait(shop: Shop) -> None:
    shop.sync("v1", FIRST)
    shop.platform.fault(kind="throttle", method="POST", path="/events$", code=17, regain_minutes=30, count=5)
    progress = shop.step("v1")
    assert progress.status == "waiting"
    assert progress.wait_seconds is not None
    assert progress.wait_seconds >= 60
    assert shop.events.records["v1"].state == "sending"


def test_an_older_versions_step_running_after_a_later_one_sends_nothing(shop: Shop) -> None:
    # Given two syncs whose steps run out of order: the later version's first
    shop.sync("v1", FIRST)
    shop.sync("v2", [*FIRST, ("o-4", "c-2", "sku-1", 1, 15.0, ago(minutes=10))])
    shop.step("v2")
    # When the earlier version's step runs at last
    progress = shop.step("v1")
    # Then it sends nothing: the later version's orders included its own
    assert progress.status == "done"
    assert shop.sent_ids() == ["o-1", "o-2", "o-3", "o-4"]
    assert "v1" not in shop.events.records


def test_a_customer_who_refused_marketing_is_never_sent_and_is_counted_apart(shop: Shop) -> None:
    # Given a sync whose customers file says c-2 refused marketing
    shop.sync("v1", FIRST, refused=("c-2",))
    # When its purchases step runs
    shop.step("v1")
    # Then c-2's order never reaches the pixel; the others do, and the record says why one is missing
    assert shop.sent_ids() == ["o-1", "o-3"]
    record = shop.events.records["v1"]
    assert (record.new_orders, record.in_window, record.no_consent, record.outside_window) == (4, 2, 1, 1)
    assert record.sent == 2


def test_with_a_purchase_model_each_purchase_carries_its_customers_predicted_value(shop: Shop) -> None:
    # Given a purchase model in force that knows c-1 (3 orders, 90 spent: 30 an order) and c-2 (no
    # order: the shop's average, 90 / 3), but not c-3 (a customer since its training)
    bundle = KnownBundle(
        {("c-1", "sku-1"): 0.5, ("c-1", "sku-2"): 0.25, ("c-2", "sku-2"): 0.1},
        {"c-1": (90.0, 3), "c-2": (0.0, 0)},
    )
    model = ModelRecord.model_validate(
        {
            "org_id": "org-1",
            "name": "shop-purchase",
            "type": "purchase",
            "version": "v7",
            "trained_at": NOW,
            "training_cutoff": NOW,
            "training_user_count": 2,
            "bundle_key": "b",
            "bundle_sha256": "0" * 64,
        }
    )
    shop.sync("v1", FIRST)
    # When the purchases step runs
    shop.step("v1", model=model, bundle=bundle)
    # Then each known customer's purchase carries probability x average order, summed over the
    # order's products, as the value-based seeds compute it; the unknown customer's carries none
    events = {entry["event"]["event_id"]: entry["event"]["custom_data"] for entry in shop.pixel()["events"]}
    assert events["o-1"]["predicted_ltv"] == round(0.5 * 30 + 0.25 * 30, 2)
    assert events["o-2"]["predicted_ltv"] == round(0.1 * 30, 2)
    assert "predicted_ltv" not in events["o-3"]
    record = shop.events.records["v1"]
    assert (record.with_predicted_value, record.predicted_value_model) == (2, "shop-purchase v7")


def test_a_purchase_models_bundle_that_cannot_be_read_holds_no_purchase_back(shop: Shop) -> None:
    # Given a purchase model whose bundle is gone
    model = ModelRecord.model_validate(
        {
            "org_id": "org-1",
            "name": "shop-purchase",
            "type": "purchase",
            "version": "v7",
            "trained_at": NOW,
            "training_cutoff": NOW,
            "training_user_count": 2,
            "bundle_key": "gone",
            "bundle_sha256": "0" * 64,
        }
    )
    shop.sync("v1", FIRST)
    # When the purchases step runs
    shop.step("v1", model=model, bundle=None)
    # Then the purchases go, without predicted values
    assert shop.sent_ids() == ["o-1", "o-2", "o-3"]
    assert shop.events.records["v1"].with_predicted_value == 0


def test_the_purchases_sent_are_counted_on_the_day_they_were_sent(shop: Shop) -> None:
    # Given a sync with three orders in the window
    shop.sync("v1", FIRST)
    # When its purchases are sent, in batches of two
    shop.step("v1", batch_size=2)
    # Then the day's counts say three purchases were sent (for the Events page and the readiness check)
    assert shop.counted[("org-1", NOW.date().isoformat())][("sync", "Purchase", "sent")] == 3


def test_the_orders_older_than_the_window_are_counted_skipped_once_for_the_events_page(shop: Shop) -> None:
    # Given a first sync whose only orders are older than the platform's window (a shop's history:
    # walking make dev, the Events page said "0 events sent ... Nothing yet: sync your shop's data"
    # after a sync of 11,086 such orders)
    shop.sync(
        "v1", [("o-a", "c-1", "sku-1", 1, 10.0, ago(days=10)), ("o-b", "c-2", "sku-2", 1, 5.0, ago(days=30))]
    )
    # When its purchases step runs, and runs again (a retry)
    shop.step("v1")
    shop.step("v1")
    # Then the day's counts say both were skipped, once, and nothing was sent
    day = shop.counted[("org-1", NOW.date().isoformat())]
    assert day[("sync", "Purchase", "skipped")] == 2
    assert day[("sync", "Purchase", "sent")] == 0
    assert shop.sent_ids() == []


def test_a_sync_counts_its_old_orders_skipped_beside_the_ones_it_sent(shop: Shop) -> None:
    # Given a sync with three orders in the window and one ten days old, sent in batches of two
    shop.sync("v1", FIRST)
    # When a step runs out of time after the first batch and the next one finishes the version
    shop.step("v1", batch_size=2, seconds_left=iter([600.0, 600.0, 10.0]).__next__)
    shop.step("v1", batch_size=2)
    # Then the old order is counted skipped once and the three others sent
    day = shop.counted[("org-1", NOW.date().isoformat())]
    assert (day[("sync", "Purchase", "sent")], day[("sync", "Purchase", "skipped")]) == (3, 1)
