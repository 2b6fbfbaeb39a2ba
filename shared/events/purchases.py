"""Purchases from the shop's own orders, sent to the ad account's pixel at each sync (issue 21, item 2).

A step of the data source state machine, run after a sync publishes a dataset version: the version's
orders that are new since the version last sent in full (``shared.events.orders``), and inside the
platform's window, go out as ``Purchase`` events, a batch of 1,000 at a time, each ``event_id`` the
order id. Orders older than the window are counted as skipped. Progress is saved after every batch, so
a step that runs out of time, or is killed, resumes where it was; what it sent again is kept once by
the platform (the same event ids, minutes apart). Versions are sent in order: a step first finishes
an earlier version stopped part-way, so no order is sent twice and none is lost.

An order paid through the hosted checkout is in the versions too, and its webhook already sent its
Purchase with the same event id (``shared.payments.pixel``): the platform keeps one, and the Events
page counts it once, under the source that sent it first (each claims the order, and only the first
claim counts).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Literal, Protocol

from pydantic import BaseModel

from shared.dataplane.engine import Workspace
from shared.errors import NotFound, ServiceError
from shared.events.checks import AGE_MARGIN_SECONDS, MAX_AGE_DAYS
from shared.events.orders import load_new_orders, order_chunks, purchase_events
from shared.events.sending import SendReport, send_checked
from shared.events.values import PurchaseValues
from shared.ml.scoring import ScoringBundle
from shared.observability import logger
from shared.platform.accounts import list_pixels, read_ad_account, require_pixel
from shared.platform.client import GraphClient
from shared.platform.errors import PlatformError, PlatformThrottled, PlatformUnavailable
from shared.platform.events import MAX_EVENTS_PER_CALL, send_events
from shared.platform.retry import may_have_executed
from shared.records.connections import Connection
from shared.records.datasources import DatasetVersion
from shared.records.events import EventRejection, PurchaseSend
from shared.records.models import ModelRecord
from shared.records.payments import OrderRecord

# A batch (build, send, save) must fit in what the invocation has left, with room to answer.
STEP_RESERVE_SECONDS = 30.0
# The model whose predicted values purchases carry (the one the value-based seeds use).
PURCHASE_MODEL = "shop-purchase"


class EventStore(Protocol):
    def get_purchases(self, org_id: str, version: str) -> PurchaseSend | None: ...
    def put_purchases(self, record: PurchaseSend) -> None: ...
    def put_purchases_counted(
        self, record: PurchaseSend, day: str, counts: dict[tuple[str, str, str], int]
    ) -> None: ...
    def finish_purchases(self, record: PurchaseSend) -> None: ...
    def mark_part_sent(self, org_id: str, version: str) -> None: ...
    def pointers(self, org_id: str) -> tuple[str | None, str | None]: ...


class Datasets(Protocol):
    def get(self, org_id: str, version: str) -> DatasetVersion | None: ...


class Blobs(Protocol):
    def download(self, key: str, path: Path) -> None: ...


class Connections(Protocol):
    def client_for(self, org_id: str) -> tuple[Connection, GraphClient]: ...
    def record_usage(self, org_id: str, graph: GraphClient) -> None: ...


class CheckoutOrders(Protocol):
    """``shared.repositories.payments.DynamoPaymentsStore``: the hosted checkout's orders, whose
    Purchase its webhook sends too, and which source counts each on the Events page."""

    def orders_paid_between(
        self, org_id: str, start: datetime | None, end: datetime
    ) -> list[OrderRecord]: ...
    def claim_pixel_count(self, order: OrderRecord, source: str, claim: str | None = ...) -> bool: ...


class ModelReader(Protocol):
    def get(self, org_id: str, name: str) -> ModelRecord | None: ...


class BundleSource(Protocol):
    def bundle_for(self, record: ModelRecord) -> ScoringBundle: ...


class PurchaseProgress(BaseModel):
    """What the state machine does next: ``done``; ``sending`` (call the step again at once); or
    ``waiting`` ``wait_seconds`` (the platform throttles)."""

    status: Literal["done", "sending", "waiting"]
    wait_seconds: int | None = None
    position: int = 0
    in_window: int = 0


@dataclass
class PurchaseEvents:
    """The purchases step. ``session`` opens the engine (``shared.dataplane.engine.session``)."""

    events: EventStore
    datasets: Datasets
    blobs: Blobs
    connections: Connections
    session: Callable[[], AbstractContextManager[Workspace]]
    clock: Callable[[], datetime]
    batch_size: int = MAX_EVENTS_PER_CALL
    # The purchase model in force gives each purchase its customer's predicted value (None: no values).
    models: ModelReader | None = None
    bundles: BundleSource | None = None
    # Whether the Events page's and the readiness check's counts per day are kept (with the progress).
    counted: bool = False
    # The hosted checkout's orders: a sync sends their Purchase again (the same event id), and the
    # Events page counts each once, under the source that sent it first (None: every one counted).
    checkout_orders: CheckoutOrders | None = None

    def step(self, org_id: str, version: str, seconds_left: Callable[[], float]) -> PurchaseProgress:
        """Send what ``version``'s purchases (and an earlier version's left part-sent) still need, for
        as long as ``seconds_left()`` allows. A transient platform failure propagates for the state
        machine's Retry (the batch it was sending goes again: the platform keeps one of each event
        id); throttling answers ``waiting``; a connection or pixel problem stops the
        version with its remedy (a later sync resumes it)."""
        _, part_sent = self.events.pointers(org_id)
        if part_sent is not None and part_sent < version:
            progress = self._step_version(org_id, part_sent, seconds_left)
            if progress.status != "done" or self._state(org_id, part_sent) != "sent":
                return progress if progress.status != "done" else PurchaseProgress(status="done")
        return self._step_version(org_id, version, seconds_left)

    def record_failure(self, org_id: str, version: str, error: str, cause: str) -> None:
        """Note on ``version``'s purchases what the state machine caught (a crash, a timeout): they stay
        where they were, and the next sync's step resumes them."""
        record = self.events.get_purchases(org_id, version)
        if record is None or record.state == "sent":
            return
        record.error = {
            "message": f"Sending the purchases stopped ({error}).",
            "remedy": "Nothing to do: the next sync sends the orders still in the platform's window.",
            "code": error,
        }
        self._save(record)

    def _state(self, org_id: str, version: str) -> str | None:
        record = self.events.get_purchases(org_id, version)
        return record.state if record else None

    def _step_version(self, org_id: str, version: str, seconds_left: Callable[[], float]) -> PurchaseProgress:
        dataset = self.datasets.get(org_id, version)
        record = self.events.get_purchases(org_id, version)
        if dataset is None or (record is not None and record.state == "sent"):
            return PurchaseProgress(status="done")
        if record is None:
            sent_through, part_sent = self.events.pointers(org_id)
            if any(later is not None and later > version for later in (sent_through, part_sent)):
                return PurchaseProgress(status="done")  # a later version went first: its orders include these
            now = self.clock()
            record = PurchaseSend(
                org_id=org_id,
                dataset_version=version,
                since_version=sent_through,
                cutoff=now - timedelta(days=MAX_AGE_DAYS, seconds=-AGE_MARGIN_SECONDS),
                created_at=now,
                updated_at=now,
            )
        try:
            connection, graph = self.connections.client_for(org_id)
        except PlatformUnavailable:
            raise
        except ServiceError as exc:  # not connected, or the token no longer works
            return self._stop(record, exc)
        try:
            return self._send(record, dataset, connection, graph, seconds_left)
        except PlatformThrottled as exc:
            self._save(record)
            wait = max(1, math.ceil(exc.retry_after_seconds or 60))
            return PurchaseProgress(status="waiting", wait_seconds=wait, position=record.position)
        except PlatformUnavailable:
            self._save(record)
            raise
        except ServiceError as exc:
            if isinstance(exc, PlatformError) and may_have_executed(exc):
                # A lost answer (5xx, transient): the state machine's Retry sends the batch again.
                self._save(record)
                raise
            return self._stop(record, exc)
        finally:
            self.connections.record_usage(org_id, graph)

    def _send(
        self,
        record: PurchaseSend,
        dataset: DatasetVersion,
        connection: Connection,
        graph: GraphClient,
        seconds_left: Callable[[], float],
    ) -> PurchaseProgress:
        if record.pixel_id is None:
            record.pixel_id = require_pixel(list_pixels(graph, str(connection.ad_account_id))).id
        currency = connection.currency or read_ad_account(graph, str(connection.ad_account_id)).currency
        pixel_id = record.pixel_id
        values = self._values(record.org_id)
        record.predicted_value_model = values.model if values is not None else None
        checkout = self._checkout_orders(record)
        with self.session() as workspace:
            found = load_new_orders(
                workspace,
                orders=self._download(workspace, dataset, "orders"),
                customers_file=self._download(workspace, dataset, "customers"),
                sent_orders=self._sent_orders(workspace, record),
                cutoff=record.cutoff or record.created_at,
            )
            # The same every time for a version (its data, since_version and cutoff are fixed).
            record.new_orders, record.in_window, record.outside_window, record.no_consent = (
                found.total,
                found.in_window,
                found.too_old,
                found.refused,
            )
            if self.counted and not record.outside_window_counted:
                # The Events page's "skipped": the version's orders already older than the window. Counted
                # with the flag that says so, in one write, so a retried step never counts them twice.
                record.outside_window_counted = True
                record.updated_at = self.clock()
                self.events.put_purchases_counted(
                    record,
                    self.clock().date().isoformat(),
                    {("sync", "Purchase", "skipped"): record.outside_window},
                )
            for chunk in order_chunks(workspace, record.position, found.in_window, self.batch_size):
                if seconds_left() < STEP_RESERVE_SECONDS:
                    self._save(record)
                    return PurchaseProgress(
                        status="sending", position=record.position, in_window=found.in_window
                    )
                events = purchase_events(chunk, currency=currency, values=values)
                record.with_predicted_value += sum(
                    1 for event in events if "predicted_ltv" in event.get("custom_data", {})
                )
                report = send_checked(
                    lambda batch: send_events(graph, pixel_id, batch),
                    iter(events),
                    now=lambda: self.clock().timestamp(),
                    batch_size=self.batch_size,
                )
                # The batch's claims are named after it: sent again after a kill, it finds them its own.
                claim = f"sync:{record.dataset_version}:{record.position}"
                counted = report.sent - self._counted_elsewhere(chunk.order_ids, report, checkout, claim)
                if record.position == 0:
                    # Before the progress: once the platform holds a batch the version is part-sent,
                    # and a step killed after the batch's write must not leave it unmarked.
                    self.events.mark_part_sent(record.org_id, record.dataset_version)
                self._add(record, report, len(chunk))
                if self.counted:
                    # The progress and the day's counts in one write: killed before it, the retry sends
                    # the batch again and counts it; after it, both are there. Never short, never twice.
                    record.updated_at = self.clock()
                    self.events.put_purchases_counted(
                        record,
                        self.clock().date().isoformat(),
                        {
                            ("sync", "Purchase", "sent"): counted,
                            ("sync", "Purchase", "rejected"): report.rejected,
                            ("sync", "Purchase", "skipped"): report.skipped_too_old,
                        },
                    )
                else:
                    self._save(record)
        record.state, record.error = "sent", None
        record.updated_at = self.clock()
        self.events.finish_purchases(record)
        logger.info(
            "Purchases sent",
            extra={
                "sent": record.sent,
                "skipped": record.outside_window + record.skipped_too_old,
                "rejected": record.rejected,
            },
        )
        return PurchaseProgress(status="done", position=record.position, in_window=record.in_window)

    def _checkout_orders(self, record: PurchaseSend) -> dict[str, OrderRecord]:
        """The hosted checkout's orders paid inside the window (only those can be sent), by order id:
        one query of the organization's orders of the last days."""
        if self.checkout_orders is None or not self.counted:
            return {}
        paid = self.checkout_orders.orders_paid_between(
            record.org_id, record.cutoff or record.created_at, self.clock() + timedelta(minutes=5)
        )
        return {order.order_id: order for order in paid}

    def _counted_elsewhere(
        self, order_ids: list[str], report: SendReport, checkout: dict[str, OrderRecord], claim: str
    ) -> int:
        """How many of the hosted checkout's orders the platform received in this batch were counted
        on the Events page before (the webhook sent their Purchase first, or an earlier send of the
        batch): the platform keeps one event per id, so the sync does not count them again. Each one
        received and not yet counted is claimed for the sync under ``claim`` (the batch's name)."""
        claims = self.checkout_orders
        if claims is None or not checkout:
            return 0
        refused = {item.event_id for item in report.rejections}
        received = [checkout[i] for i in order_ids if i in checkout and i not in refused]
        return sum(1 for order in received if not claims.claim_pixel_count(order, "sync", claim))

    def _values(self, org_id: str) -> PurchaseValues | None:
        """The purchase model in force's values, or None (no purchase model yet, or its bundle cannot
        be read: the purchases still go, without a predicted value)."""
        if self.models is None or self.bundles is None:
            return None
        model = self.models.get(org_id, PURCHASE_MODEL)
        if model is None or model.type != "purchase":
            return None
        try:
            return PurchaseValues(self.bundles.bundle_for(model), f"{model.name} {model.version}")
        except Exception:  # a value is an extra: never a reason to hold purchases back
            logger.exception("The purchase model's bundle could not be read; purchases go without values")
            return None

    def _download(self, workspace: Workspace, dataset: DatasetVersion, kind: str) -> Path:
        path = workspace.path(f"{dataset.version}-{kind}.parquet")
        self.blobs.download(dataset.keys[kind], path)
        return path

    def _sent_orders(self, workspace: Workspace, record: PurchaseSend) -> Path | None:
        if record.since_version is None:
            return None
        since = self.datasets.get(record.org_id, record.since_version)
        if since is None:
            raise NotFound(f"Dataset version {record.since_version} is gone.")
        return self._download(workspace, since, "orders")

    def _add(self, record: PurchaseSend, report: SendReport, orders: int) -> None:
        record.position += orders
        record.sent += report.sent
        record.calls += report.calls
        record.skipped_too_old += report.skipped_too_old
        record.rejected += report.rejected
        for reason, count in report.reasons.items():
            record.reasons[reason] = record.reasons.get(reason, 0) + count
        room = 100 - len(record.rejections)
        record.rejections.extend(
            EventRejection(
                event_id=item.event_id,
                event_name=item.event_name,
                reason=item.reason,
                remedy=item.remedy,
                field=item.field,
                platform_code=item.platform_code,
                platform_subcode=item.platform_subcode,
                fbtrace_id=item.fbtrace_id,
            )
            for item in report.rejections[: max(room, 0)]
        )

    def _stop(self, record: PurchaseSend, exc: ServiceError) -> PurchaseProgress:
        record.state = "stopped"
        record.error = {"message": exc.message, "remedy": exc.remedy or "", "code": exc.code}
        self._save(record)
        logger.warning("Purchases stopped", extra={"code": exc.code, "position": record.position})
        return PurchaseProgress(status="done", position=record.position, in_window=record.in_window)

    def _save(self, record: PurchaseSend) -> None:
        record.updated_at = self.clock()
        self.events.put_purchases(record)
