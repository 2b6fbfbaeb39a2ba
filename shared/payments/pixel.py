"""A paid hosted-checkout order sent to the ad account's pixel as a ``Purchase`` (issue 21's events).

Built once by the conversion-events package (``shared.events.building``: the buyer through the
audiences' normaliser and hasher, the value in the order's currency, the product as its content) with
the provider's session id as ``event_id``, so a webhook delivered again, or a retried sending, is kept
once by the platform. The hosted page is the website the purchase happened on: the event is a
``website`` one, with the checkout page as its URL and the shopper's browser (its user agent, taken
when the checkout started) as the platform requires; without it, ``other``.

An organization without a connected ad account, or an ad account without a pixel, sends nothing (the
order stands; logged, and counted "not sent" on the Events page: the next sync sends it if it is still
inside the platform's 7 days). A platform that fails or throttles raises, so the webhook answers 500 and the
provider delivers the event again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Protocol

from shared.audiences.preparation import IdentifierColumns
from shared.clock import Clock
from shared.errors import ServiceError
from shared.events.building import ActionSource, Content, customers, purchase_event
from shared.events.sending import send_checked
from shared.observability import logger
from shared.payments.money import minor_unit_factor
from shared.platform.accounts import list_pixels, require_pixel
from shared.platform.client import GraphClient
from shared.platform.errors import PlatformThrottled, PlatformUnavailable
from shared.platform.events import send_events
from shared.records.connections import Connection
from shared.records.events import StoredRejection
from shared.records.payments import CheckoutRecord, OrderRecord

# What to do about a checkout purchase the service's own check keeps back: the service built it.
CHECKOUT_REMEDY = "The hosted checkout built this event: report it to us with the event id."


class PlatformConnections(Protocol):
    """``shared.connections.lifecycle.ConnectionService``."""

    def client_for(self, org_id: str) -> tuple[Connection, GraphClient]: ...
    def record_usage(self, org_id: str, graph: GraphClient) -> None: ...


def buyer_id(email: str | None, session_id: str) -> str:
    """The buyer's id in the service's data: one per e-mail address (so a repeat buyer is one
    customer), else the session's."""
    if email and email.strip():
        return "checkout-" + hashlib.sha256(email.strip().lower().encode()).hexdigest()[:24]
    return f"checkout-{session_id}"


class CountClaims(Protocol):
    """``shared.repositories.payments.DynamoPaymentsStore``: which source counts an order's Purchase."""

    def claim_pixel_count(self, order: OrderRecord, source: str, claim: str | None = ...) -> bool: ...


class Tally(Protocol):
    """``shared.repositories.events.DynamoEventSiteStore``: the Events page's day counts and rejections."""

    def add_counts_once(
        self, org_id: str, day: str, counts: dict[tuple[str, str, str], int], marker: str, at: datetime
    ) -> bool: ...
    def add_rejections(self, org_id: str, rejections: Sequence[StoredRejection]) -> None: ...


@dataclass
class PixelPurchases:
    connections: PlatformConnections
    clock: Clock
    tally: Tally | None = None
    # The order's one count on the Events page: the webhook and a later sync both send its Purchase
    # (the platform keeps one per event id), and the first to claim it counts it.
    claims: CountClaims | None = None

    def send(
        self,
        order: OrderRecord,
        email: str | None,
        name: str | None,
        checkout: CheckoutRecord,
        page: str,
    ) -> bool:
        """Send ``order`` to the pixel of the organization's ad account; False when there is nowhere
        to send it (no connected ad account, no pixel: counted "not sent" once). What became of it is
        added to the Events page's counts (source ``checkout``) once per order, whichever delivery
        sends it (a first one whose handler died before its count, a repeat), and a rejection kept
        there; a Purchase the platform received counts only if no other source (a sync) counted the
        order first. Raises the platform's transient failures."""
        try:
            connection, graph = self.connections.client_for(order.org_id)
        except (PlatformUnavailable, PlatformThrottled):
            raise
        except ServiceError as exc:
            logger.info("checkout purchase not sent: no usable ad account", extra={"code": exc.code})
            self._count_not_sent(order)
            return False
        try:
            pixel_id = require_pixel(list_pixels(graph, str(connection.ad_account_id))).id
            first, _, last = (name or "").strip().partition(" ")
            user_id = buyer_id(email, order.order_id)
            columns = IdentifierColumns(
                user_ids=[user_id],
                emails=[email],
                phones=[None],
                first_names=[first or None],
                last_names=[last or None],
                countries=[None],
            )
            customer = customers(columns)[user_id]
            source = ActionSource.OTHER
            if checkout.client_user_agent:
                customer = type(customer)(
                    {**customer.user_data, "client_user_agent": checkout.client_user_agent},
                    customer.data_processing,
                )
                source = ActionSource.WEBSITE
            event = purchase_event(
                order_id=order.order_id,
                event_time=int(order.paid_at.timestamp()),
                action_source=source,
                customer=customer,
                value=order.amount_total / minor_unit_factor(order.currency),
                currency=order.currency,
                contents=[
                    Content(
                        order.product_id,
                        order.quantity,
                        checkout.unit_amount / minor_unit_factor(order.currency),
                    )
                ],
                event_source_url=page if source is ActionSource.WEBSITE else None,
            )
            report = send_checked(
                lambda batch: send_events(graph, pixel_id, batch),
                [event],
                now=lambda: self.clock().timestamp(),
                remedy=CHECKOUT_REMEDY,
            )
        except (PlatformUnavailable, PlatformThrottled):
            raise
        except ServiceError as exc:
            logger.warning("checkout purchase not sent to the pixel", extra={"code": exc.code})
            self._count_not_sent(order)
            return False
        finally:
            self.connections.record_usage(order.org_id, graph)
        logger.info("checkout purchase sent", extra={"sent": report.sent, "rejected": report.rejected})
        if self.tally is not None:
            now = self.clock()
            sent = report.sent
            # The claim is named after the order: a delivery handled again finds it its own.
            claim = f"checkout:{order.order_id}"
            if (
                sent
                and self.claims is not None
                and not self.claims.claim_pixel_count(order, "checkout", claim)
            ):
                sent = 0  # a sync sent it first: the platform counted that one
            counted = self.tally.add_counts_once(
                order.org_id,
                now.date().isoformat(),
                {
                    ("checkout", "Purchase", "sent"): sent,
                    ("checkout", "Purchase", "rejected"): report.rejected,
                    ("checkout", "Purchase", "skipped"): report.skipped_too_old,
                },
                marker=claim,
                at=now,
            )
            if counted and report.rejections:
                self.tally.add_rejections(
                    order.org_id,
                    [
                        StoredRejection(**asdict(item), source="checkout", at=now)
                        for item in report.rejections
                    ],
                )
        return report.sent == 1

    def _count_not_sent(self, order: OrderRecord) -> None:
        """Count ``order``'s Purchase as not sent on the Events page (no usable ad account, no pixel, a
        refusal of the platform), once per order however often its webhook is delivered. A later sync
        sends it while it is inside the platform's window, and counts it sent then."""
        if self.tally is None:
            return
        now = self.clock()
        self.tally.add_counts_once(
            order.org_id,
            now.date().isoformat(),
            {("checkout", "Purchase", "failed"): 1},
            marker=f"checkout-not-sent:{order.order_id}",
            at=now,
        )
