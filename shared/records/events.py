"""Conversion events sent to the ad account's pixel (issue 21): what each sync's purchases became."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

PurchaseSendState = Literal["sending", "stopped", "sent"]


class EventRejection(BaseModel):
    """One event that was not sent: its id and name, why (our check, or the platform's own words) and
    what to do. Never a customer's identifier."""

    event_id: str | None = None
    event_name: str | None = None
    reason: str
    remedy: str
    field: str | None = None
    platform_code: int | None = None
    platform_subcode: int | None = None
    fbtrace_id: str | None = None


class PurchaseSend(BaseModel):
    """The purchases of one dataset version's new orders (orders not in ``since_version``, the version
    whose purchases were last sent in full), sent as ``Purchase`` events.

    ``position`` counts the new orders inside the window dealt with, in time order: a resumed step
    starts there. ``sending`` until every one is dealt with, then ``sent``; ``stopped`` when the
    platform could not take them (no connection, no pixel, a refused token), with ``error`` saying what
    to do. Versions are sent in order: a later version's step first finishes one stopped part-way
    (``position`` > 0), whose orders still in the window then go, so nothing is sent twice or lost;
    one stopped before sending anything leaves its orders to the next version.
    """

    org_id: str
    dataset_version: str
    since_version: str | None = None
    state: PurchaseSendState = "sending"
    pixel_id: str | None = None
    new_orders: int = Field(default=0, description="Orders in this version not in since_version.")
    in_window: int = Field(default=0, description="Of those, the ones recent enough to send.")
    position: int = 0
    sent: int = Field(default=0, description="Events the platform said it received.")
    outside_window: int = Field(default=0, description="New orders already older than the window: skipped.")
    no_consent: int = Field(
        default=0,
        description="New orders of customers who refused marketing: never sent, whatever their time.",
    )
    skipped_too_old: int = Field(default=0, description="Orders that left the window before their batch did.")
    outside_window_counted: bool = Field(
        default=False, description="outside_window was added to the Events page's day (once per version)."
    )
    rejected: int = 0
    calls: int = 0
    with_predicted_value: int = Field(default=0, description="Purchases that carried predicted_ltv.")
    predicted_value_model: str | None = Field(default=None, description="The model that gave the values.")
    reasons: dict[str, int] = Field(default_factory=dict)
    rejections: list[EventRejection] = Field(default_factory=list, description="The first rejections.")
    cutoff: datetime | None = Field(default=None, description="Orders before it were outside the window.")
    error: dict[str, str] | None = Field(default=None, description="message and remedy (stopped).")
    created_at: datetime
    updated_at: datetime


EventSource = Literal["site", "sync", "checkout"]
EventOutcome = Literal["sent", "rejected", "skipped"]


class EventSite(BaseModel):
    """What an organization's shop pages may send (issue 21, item 3): the domains whose pages may call
    the site events endpoint, the site key in force (public by design: it is in every page of the shop,
    and it can only send events), a key rotated out that still works until it expires, and the test
    event code the site's events carry while the merchant checks them in Events Manager."""

    org_id: str
    domains: list[str] = Field(default_factory=list)
    test_event_code: str | None = None
    key: str | None = None
    key_created_at: datetime | None = None
    previous_key: str | None = None
    previous_key_expires_at: datetime | None = None
    updated_at: datetime


class SiteAdmission(BaseModel):
    """What one request under a site key may do: its organization's declared domains and test code;
    or why it may not (``refused``: the key is unknown, revoked or expired, or the site sent its limit
    of events for now, ``retry_after_seconds`` before the next window)."""

    org_id: str | None = None
    domains: list[str] = Field(default_factory=list)
    test_event_code: str | None = None
    refused: Literal["unknown", "revoked", "throttled"] | None = None
    retry_after_seconds: int | None = None


class EventDay(BaseModel):
    """One UTC day's events, counted as they were dealt with: ``counts[source][event name][outcome]``
    (``site``: the shop's pages; ``sync``: purchases from the synced orders; ``checkout``: the hosted
    checkout's paid orders)."""

    date: str
    counts: dict[str, dict[str, dict[str, int]]] = Field(default_factory=dict)


class StoredRejection(EventRejection):
    """A rejected event as the Events page lists it: where it came from and when."""

    source: EventSource
    at: datetime
