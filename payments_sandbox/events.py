"""Events and their webhook deliveries (docs/payments-notes.md §4).

``emit`` records an event with a snapshot of the object it is about and queues one delivery per
endpoint that wants it. ``sign`` builds the ``Stripe-Signature`` header exactly as the provider
does: ``t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" keyed with the endpoint secret>``.
``deliver_due`` sends whatever is due, outside the lock, and schedules each failure's retry.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
from dataclasses import dataclass
from typing import Any

import httpx

from payments_sandbox.state import PaymentsSandboxState
from payments_sandbox.world import Attempt, Delivery, DeliveryState, Event, WebhookEndpoint, new_id

logger = logging.getLogger("payments_sandbox")

# The event types the sandbox emits, and the others a webhook endpoint may subscribe to.
EMITTED = (
    "account.updated",
    "checkout.session.completed",
    "checkout.session.expired",
    "payment_intent.payment_failed",
    "payment_intent.succeeded",
    "charge.refunded",
    "refund.created",
    "charge.dispute.created",
    "charge.dispute.updated",
    "charge.dispute.closed",
    "charge.dispute.funds_withdrawn",
    "charge.dispute.funds_reinstated",
)
SUBSCRIBABLE = frozenset(
    {
        *EMITTED,
        "*",
        "account.application.authorized",
        "account.application.deauthorized",
        "checkout.session.async_payment_failed",
        "checkout.session.async_payment_succeeded",
        "charge.succeeded",
        "charge.failed",
        "payment_intent.created",
        "payment_intent.canceled",
    }
)
USER_AGENT = "Stripe/1.0 (+https://stripe.com/docs/webhooks)"


@dataclass(frozen=True)
class RequestOrigin:
    """The API request that caused an event (None for the timer and the hosted pages)."""

    request_id: str | None = None
    idempotency_key: str | None = None


def emit(
    state: PaymentsSandboxState,
    type_: str,
    obj: dict[str, Any],
    *,
    account: str | None,
    origin: RequestOrigin | None = None,
    previous_attributes: dict[str, Any] | None = None,
) -> Event:
    """Record an event about ``obj`` (a snapshot, so later changes do not show) and queue its deliveries."""
    now = state.now()
    data: dict[str, Any] = {"object": json.loads(json.dumps(obj))}
    if previous_attributes is not None:
        data["previous_attributes"] = previous_attributes
    origin = origin or RequestOrigin()
    event = Event(
        event_id=new_id("evt"),
        type=type_,
        created=int(now),
        account=account,
        data=data,
        api_version=state.config.api_version,
        request_id=origin.request_id,
        idempotency_key=origin.idempotency_key,
    )
    for endpoint in state.world.endpoints.values():
        if endpoint.wants(event):
            event.deliveries.append(Delivery(event.event_id, endpoint.endpoint_id, next_at=now))
            if endpoint.api_version:
                event.api_version = endpoint.api_version
    state.world.events[event.event_id] = event
    state.wakeup.set()
    return event


def payload_of(event: Event) -> str:
    """The raw body sent to endpoints: the event as pretty-printed JSON, as the provider sends it."""
    return json.dumps(event.to_api(), indent=2)


def signature(payload: str, secret: str, timestamp: int) -> str:
    """``v1``: hex HMAC-SHA256 of ``"<timestamp>.<payload>"`` keyed with the endpoint's secret."""
    signed = f"{timestamp}.{payload}".encode()
    return hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()


def sign(payload: str, secret: str, timestamp: int) -> str:
    """The ``Stripe-Signature`` header: ``t=<timestamp>,v1=<signature>,v0=<...>``.

    Test-mode deliveries also carry a ``v0`` that no receiver should check; it is keyed differently,
    so a receiver that takes the wrong scheme fails here as it would there (docs/payments-notes.md §4.2).
    """
    v0 = signature(payload, f"v0:{secret}", timestamp)
    return f"t={timestamp},v1={signature(payload, secret, timestamp)},v0={v0}"


@dataclass
class Sending:
    """One attempt to make, taken from the state under the lock and sent outside it."""

    delivery: Delivery
    event: Event
    endpoint: WebhookEndpoint
    redelivery: bool = False
    signed_at: int | None = None


def take_due(state: PaymentsSandboxState) -> list[Sending]:
    """Deliveries due now, marked in flight so no other thread sends them too. Caller holds the lock."""
    now = state.now()
    due: list[Sending] = []
    for event in state.world.events.values():
        for delivery in event.deliveries:
            if delivery.in_flight or delivery.state is not DeliveryState.PENDING:
                continue
            if delivery.next_at is None or delivery.next_at > now:
                continue
            endpoint = state.world.endpoints.get(delivery.endpoint_id)
            if endpoint is None:  # deleted since: nowhere to send it
                delivery.state, delivery.next_at = DeliveryState.FAILED, None
                continue
            delivery.in_flight = True
            due.append(Sending(delivery, event, endpoint))
    return due


def next_due(state: PaymentsSandboxState) -> float | None:
    """When the earliest pending delivery is due (sandbox clock), or None. Caller holds the lock."""
    times = [
        delivery.next_at
        for event in state.world.events.values()
        for delivery in event.deliveries
        if delivery.state is DeliveryState.PENDING and delivery.next_at is not None and not delivery.in_flight
    ]
    return min(times, default=None)


def send(state: PaymentsSandboxState, sending: Sending, client: httpx.Client) -> Attempt:
    """POST the event to the endpoint (no lock held: the receiver may call the sandbox back)."""
    with state.lock:
        payload = payload_of(sending.event)
        signed_at = sending.signed_at if sending.signed_at is not None else int(state.now())
        started = state.now()
    headers = {
        "Content-Type": "application/json; charset=utf-8",
        "Stripe-Signature": sign(payload, sending.endpoint.secret, signed_at),
        "User-Agent": USER_AGENT,
        "Accept": "*/*; q=0.5, application/xml",
        "Cache-Control": "no-cache",
    }
    try:
        response = client.post(sending.endpoint.url, content=payload.encode(), headers=headers)
        attempt = Attempt(started, signed_at, response.status_code, redelivery=sending.redelivery)
    except httpx.HTTPError as exc:
        attempt = Attempt(started, signed_at, None, error=type(exc).__name__, redelivery=sending.redelivery)
    logger.info(
        "delivered %s %s to %s: %s",
        sending.event.type,
        sending.event.event_id,
        sending.endpoint.endpoint_id,
        attempt.status or attempt.error,
    )
    return attempt


def record(state: PaymentsSandboxState, sending: Sending, attempt: Attempt) -> None:
    """Add the attempt and decide what follows: done on a 2xx, else the next retry or failure.

    A redelivery (``resend``) is recorded but does not move the retry schedule. Caller holds the lock.
    """
    delivery = sending.delivery
    delivery.attempts.append(attempt)
    if sending.redelivery:
        if attempt.succeeded and delivery.state is DeliveryState.FAILED:
            delivery.state = DeliveryState.SUCCEEDED
        return
    delivery.in_flight = False
    if attempt.succeeded:
        delivery.state, delivery.next_at = DeliveryState.SUCCEEDED, None
        return
    failures = sum(1 for a in delivery.attempts if not a.redelivery and not a.succeeded)
    delays = state.config.webhook_retry_delays
    if failures > len(delays):
        delivery.state, delivery.next_at = DeliveryState.FAILED, None
    else:
        delivery.next_at = state.now() + delays[failures - 1]
        state.wakeup.set()


def http_client(state: PaymentsSandboxState) -> httpx.Client:
    """The client deliveries go through (the state's transport in tests, else the network)."""
    return httpx.Client(
        timeout=state.config.webhook_timeout_seconds, transport=state.transport, follow_redirects=False
    )


def deliver_due(state: PaymentsSandboxState) -> list[tuple[Sending, Attempt]]:
    """Send every delivery due now, record the outcomes, and return them (oldest event first)."""
    with state.lock:
        due = take_due(state)
    results: list[tuple[Sending, Attempt]] = []
    if not due:
        return results
    with http_client(state) as client:
        for sending in due:
            attempt = send(state, sending, client)
            with state.lock:
                record(state, sending, attempt)
            results.append((sending, attempt))
    return results


def resend(
    state: PaymentsSandboxState, event: Event, *, endpoint_id: str | None, signed_at: int | None
) -> list[tuple[Sending, Attempt]]:
    """Deliver ``event`` again now to its endpoints (or one), as the provider's "resend" does:
    the same event id and body, a fresh signature (at ``signed_at`` when given)."""
    with state.lock:
        sendings = [
            Sending(delivery, event, state.world.endpoints[delivery.endpoint_id], True, signed_at)
            for delivery in event.deliveries
            if (endpoint_id is None or delivery.endpoint_id == endpoint_id)
            and delivery.endpoint_id in state.world.endpoints
        ]
    results = []
    with http_client(state) as client:
        for sending in sendings:
            attempt = send(state, sending, client)
            with state.lock:
                record(state, sending, attempt)
            results.append((sending, attempt))
    return results
