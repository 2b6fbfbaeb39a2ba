"""Events from the shop's own pages, relayed to the pixel (issue 21, item 3).

The snippet on each page (``shared.events.snippet``) gives the browser pixel and this endpoint the same
event with the same ``eventId``, so the platform keeps one of the two (docs/platform-notes.md §11.8).
Each request is admitted by one conditional write on its site key's item (``Admissions.admit``: the key
is known and not revoked, the site is under its limit of events for the window), must come from a page
of one of the organization's declared domains (the browser's ``Origin``), and is relayed at once as
``website`` events carrying what only the server sees: the browser's IP address and user agent, with
the page's ``_fbp`` and ``_fbc`` cookies, never hashed (§11.4). Nothing of a request is stored but
counts, for an event refused (or a request refused whole, its first event's) its id, name and the
reason, and for an event sent its name and id (48 hours, the platform's window for keeping one event
per name and id, so the Events page counts one sent again once, as the platform keeps it): the IP
address and cookies pass through memory to the platform, and are never logged.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Annotated, Any, Literal, Protocol, get_args

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from shared.errors import (
    Conflict,
    Forbidden,
    NotFound,
    QuotaExceeded,
    ServiceError,
    Unauthorized,
    ValidationFailed,
)
from shared.events.building import ActionSource, Customer, ServerEvent, server_event
from shared.events.checks import Verdict, check_event
from shared.events.sending import send_checked
from shared.events.sites import origin_allowed, page_origin
from shared.observability import logger
from shared.platform.accounts import list_pixels, require_pixel
from shared.platform.client import GraphClient
from shared.platform.errors import PlatformError, PlatformThrottled, PlatformUnavailable
from shared.platform.events import send_events
from shared.platform.retry import should_retry_error
from shared.records.connections import Connection
from shared.records.events import SiteAdmission, StoredRejection
from shared.wire_models import CamelModel

# What to do about an event of the site that our own check keeps back.
SITE_REMEDY = "Correct the call on the shop's page (the event's parameters); the next page view sends it."
# How long a platform that cannot take events now is left alone, when it does not say.
UNAVAILABLE_RETRY_SECONDS = 30
# Time kept back from a relay's waits and attempts, to answer the page before the function's end.
ANSWER_RESERVE_SECONDS = 2.0
# The largest body read: 20 events with their products fit in far less.
MAX_BODY_CHARACTERS = 64_000
# The platform keeps one event per name and id sent within 48 hours of the first (reference/conversions-api
# §6, as the sandbox does): an event sent again within it is counted sent once on the Events page.
DEDUP_WINDOW_SECONDS = 48 * 3600
# The event names the relay takes; a refused body's other names are counted as "Other".
SiteEventName = Literal["ViewContent", "AddToCart", "InitiateCheckout", "Purchase"]
SITE_EVENT_NAMES: tuple[str, ...] = get_args(SiteEventName)

Text = Annotated[str, StringConstraints(min_length=1, max_length=200)]
Id = Annotated[str, StringConstraints(min_length=1, max_length=100)]


class SiteContent(BaseModel):
    """One product of the event, as the pixel takes ``contents``."""

    model_config = ConfigDict(extra="ignore")

    id: Id
    quantity: int = Field(default=1, ge=1, le=100_000)
    item_price: float | None = Field(default=None, ge=0, allow_inf_nan=False)


class SiteCustomData(BaseModel):
    """The event's parameters, with the pixel's own names: the object the page gives ``fbq('track',
    name, data)`` is the one the snippet sends here. Other keys are the pixel's alone and not relayed."""

    model_config = ConfigDict(extra="ignore")

    value: float | None = Field(default=None, ge=0, le=1e12, allow_inf_nan=False)
    currency: str | None = Field(default=None, pattern=r"^[A-Za-z]{3}$", description="ISO 4217, e.g. GBP.")
    content_ids: list[Id] | None = Field(default=None, max_length=100)
    contents: list[SiteContent] | None = Field(default=None, max_length=100)
    content_type: Literal["product", "product_group"] | None = None
    content_name: Text | None = None
    content_category: Text | None = None
    num_items: int | None = Field(default=None, ge=0, le=100_000)
    order_id: Id | None = None

    def as_custom_data(self) -> dict[str, Any]:
        """The Conversions API's ``custom_data`` (docs/platform-notes.md §11.5)."""
        data = self.model_dump(exclude_none=True)
        if "currency" in data:
            data["currency"] = data["currency"].upper()
        if "contents" in data:
            data["contents"] = [{k: v for k, v in item.items() if v is not None} for item in data["contents"]]
        return data


class SiteEvent(CamelModel):
    """One event of a shop's page."""

    event_name: SiteEventName
    event_id: str = Field(
        min_length=1,
        max_length=128,
        pattern=r"^[\x21-\x7e]+$",
        description="The id the browser pixel got as eventID (an order's id for a purchase).",
    )
    event_time: int | None = Field(
        default=None, ge=0, description="Unix time in seconds; the time it is received when not given."
    )
    url: str = Field(min_length=8, max_length=2048, description="The page's address (location.href).")
    fbp: str | None = Field(default=None, max_length=256, description="The page's _fbp cookie, as it is.")
    fbc: str | None = Field(
        default=None, max_length=512, description="The page's _fbc cookie, or one made from its fbclid."
    )
    custom_data: SiteCustomData | None = None


class SiteEventBatch(CamelModel):
    """What the snippet sends: the events of one page moment (one, usually)."""

    events: list[SiteEvent] = Field(min_length=1, max_length=20)


class SiteRejection(CamelModel):
    event_id: str
    reason: str
    remedy: str


class SiteEventsReceived(CamelModel):
    """What became of a request's events: received, sent to the pixel, skipped (older than the
    platform's window) and rejected (with the reason and what to do)."""

    received: int
    sent: int
    skipped: int
    rejected: list[SiteRejection] = Field(default_factory=list)


class Admissions(Protocol):
    def admit(self, key: str, events: int, now: float, limit: int, window_seconds: int) -> SiteAdmission: ...
    def key_domains(self, key: str, now: float) -> list[str]: ...


class Tally(Protocol):
    """``shared.repositories.events.DynamoEventSiteStore``: the Events page's day counts, what was
    counted once, and rejections."""

    def add_counts(self, org_id: str, day: str, counts: dict[tuple[str, str, str], int]) -> None: ...
    def mark_counted(
        self, org_id: str, markers: Sequence[str], at: datetime, keep_seconds: int
    ) -> list[str]: ...
    def add_rejections(self, org_id: str, rejections: Sequence[StoredRejection]) -> None: ...


class Connections(Protocol):
    def client_for(self, org_id: str) -> tuple[Connection, GraphClient]: ...


@dataclass(frozen=True)
class SiteLimits:
    """Per site key: at most ``per_window`` events each ``window_seconds``; ``per_request`` at once."""

    per_window: int = 100
    window_seconds: int = 10
    per_request: int = 20


class SiteThrottled(QuotaExceeded):
    """The site sent its limit of events for now (429 with Retry-After)."""

    code = "site_events_throttled"

    def __init__(self, message: str, *, remedy: str, retry_after_seconds: float) -> None:
        super().__init__(message, remedy=remedy, retry_after_seconds=retry_after_seconds)


class EventsNotRelayed(ServiceError):
    """The platform cannot take the events now (503 with Retry-After): the page may send them again
    later with the same ids, and the platform keeps one."""

    status = 503
    code = "events_not_relayed"

    def __init__(self, message: str, *, remedy: str, retry_after_seconds: float) -> None:
        super().__init__(message, remedy=remedy, retry_after_seconds=retry_after_seconds)


@dataclass
class RelayTargets:
    """Each organization's Graph client and pixel, kept per container for ``ttl_seconds`` (a request
    would otherwise decrypt the token and list the pixels before each relay)."""

    connections: Connections
    ttl_seconds: float = 300.0
    clock: Callable[[], float] = time.monotonic
    _targets: dict[str, tuple[float, GraphClient, str]] = field(default_factory=dict)

    def target(self, org_id: str) -> tuple[GraphClient, str]:
        """The client and pixel id to relay the organization's events with. Raises what
        ``client_for`` raises (not connected, token refused) and ``PixelNotFound``."""
        kept = self._targets.get(org_id)
        if kept is not None and self.clock() < kept[0]:
            return kept[1], kept[2]
        connection, graph = self.connections.client_for(org_id)
        pixel = require_pixel(list_pixels(graph, str(connection.ad_account_id))).id
        self._targets[org_id] = (self.clock() + self.ttl_seconds, graph, pixel)
        return graph, pixel

    def forget(self, org_id: str) -> None:
        self._targets.pop(org_id, None)


# Site keys are ``sk_`` and 18 characters; anything longer is refused before it is looked up.
MAX_SITE_KEY_CHARACTERS = 64


def events_in(body: Any, per_request: int) -> int:
    """How many events a body holds, read before it is validated (the admission counts them): at least
    one, and at most one more than a request may carry (the validation refuses the rest)."""
    events = body.get("events") if isinstance(body, dict) else None
    return max(1, min(len(events), per_request + 1)) if isinstance(events, list) else 1


def parsed_body(text: str) -> Any:
    """The body's JSON, or None when it is not JSON (or too large to read): what the admission counts
    events in; :func:`site_batch` then says what is wrong with it."""
    if len(text) > MAX_BODY_CHARACTERS:
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def site_batch(text: str, body: Any) -> SiteEventBatch:
    """The events of a request's body (``text``, parsed as ``body``). Raises ``ValidationFailed``
    (400) naming the first field at fault."""
    if len(text) > MAX_BODY_CHARACTERS:
        raise ValidationFailed(
            f"The body is longer than {MAX_BODY_CHARACTERS:,} characters.",
            field="body",
            remedy="Send the events of one page at a time, as the snippet does.",
        )
    if body is None:
        raise ValidationFailed(
            "The body is not JSON.", field="body", remedy='Send {"events": [...]}, as the snippet does.'
        )
    try:
        return SiteEventBatch.model_validate(body)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "body"
        more = f" (and {exc.error_count() - 1} more problem(s))" if exc.error_count() > 1 else ""
        raise ValidationFailed(
            f"{field}: {first['msg']}{more}",
            field=field,
            remedy="Correct the call on the shop's page (the snippet's shopEvent arguments).",
        ) from None


def cors_headers(origin: str | None, domains: Sequence[str]) -> dict[str, str]:
    """The answer's CORS headers: the page's origin is allowed to read it when it is on one of the
    organization's ``domains``, never otherwise (and never ``*``)."""
    if origin and origin_allowed(origin, domains):
        return {"Access-Control-Allow-Origin": origin, "Vary": "Origin"}
    return {"Vary": "Origin"}


def unexpected_failure() -> EventsNotRelayed:
    """What the page is told when the service itself failed: try again (never a 500, which the page
    could not tell from a request it should not repeat)."""
    return EventsNotRelayed(
        "The events could not be taken now.",
        remedy="Send them again after the wait (Retry-After): they keep their ids, so none counts twice.",
        retry_after_seconds=UNAVAILABLE_RETRY_SECONDS,
    )


@dataclass
class SiteEvents:
    """The public site events endpoint's logic: admit a request, then relay its events."""

    admissions: Admissions
    tally: Tally
    targets: RelayTargets
    clock: Callable[[], datetime]
    limits: SiteLimits = field(default_factory=SiteLimits)

    def admit(self, site_key: str, events: int, origin: str | None) -> SiteAdmission:
        """Admit a request of ``events`` under ``site_key`` from a page of ``origin``. Raises
        ``Unauthorized`` (unknown or revoked key), ``SiteThrottled`` (limit reached, with the wait) or
        ``Forbidden`` (a page of a domain the organization did not declare, or no page at all)."""
        known = bool(site_key) and len(site_key) <= MAX_SITE_KEY_CHARACTERS
        admission = (
            self.admissions.admit(
                site_key, events, self.clock().timestamp(), self.limits.per_window, self.limits.window_seconds
            )
            if known  # no key, or one no key could be, is not looked up (an empty key is no item key)
            else None
        )
        if admission is None or admission.refused in ("unknown", "revoked"):
            raise Unauthorized(
                "The site key is not valid: it was revoked, or replaced more than a day ago.",
                field="siteKey",
                remedy="Paste the snippet from the dashboard's Events page into the shop's pages again.",
            )
        if admission.refused == "throttled":
            raise SiteThrottled(
                f"The site sent more than {self.limits.per_window} events in {self.limits.window_seconds} "
                "seconds.",
                remedy="Send the events again after the wait (Retry-After); they keep their ids.",
                retry_after_seconds=admission.retry_after_seconds or 1,
            )
        if not origin_allowed(origin, admission.domains):
            raise Forbidden(
                "Events are taken from pages of the shop's declared domains only"
                + (f"; {origin[:100]} is not one." if origin else ", and this request came from no page."),
                field="Origin",
                remedy="Add the shop's domain on the dashboard's Events page.",
            )
        return admission

    def domains_of(self, site_key: str) -> list[str]:
        """The domains whose pages may send under ``site_key`` (none for a key not in force): what a
        browser's preflight is answered for. Counts nothing."""
        return self.admissions.key_domains(site_key, self.clock().timestamp())

    def batch_of(self, admission: SiteAdmission, text: str, body: Any) -> SiteEventBatch:
        """The events of an admitted request's body (:func:`site_batch`). A body refused whole (400: an
        event name the relay does not take, a value that is no number, not JSON, too many events) is
        kept for the Events page, since the snippet does not show the page its 400: one rejection
        (the id and name of the event the failed check is about, else the first's; the reason; what
        to do) and each of its events counted rejected, under its name when the relay takes that
        name, else ``Other`` (a page's own names never become counters). The page is answered the
        400 even when that cannot be kept."""
        try:
            return site_batch(text, body)
        except ValidationFailed as exc:
            assert admission.org_id is not None
            try:
                self._keep_refused(admission.org_id, body, exc)
            except Exception:
                logger.exception("a site request refused whole was not kept for the Events page")
            raise

    def _keep_refused(self, org_id: str, body: Any, refusal: ValidationFailed) -> None:
        now = self.clock()
        events = body.get("events") if isinstance(body, dict) else None
        # As many as the admission counted (events_in): one for a body without events.
        items = events[: self.limits.per_request + 1] if isinstance(events, list) and events else [None]
        # The event the failed check is about ("events.<index>...", else the first) names the rejection.
        about = re.match(r"events\.(\d+)", refusal.field or "")
        index = int(about.group(1)) if about and int(about.group(1)) < len(items) else 0
        item = items[index]
        named: dict[str, Any] = item if isinstance(item, dict) else {}
        event_id, event_name = named.get("eventId"), named.get("eventName")
        rejection = StoredRejection(
            event_id=event_id if _printable(event_id, 128) else None,
            event_name=event_name if _printable(event_name, 64) else None,
            reason=_storable(refusal.message)[:500],
            remedy=_storable(refusal.remedy or SITE_REMEDY),
            field=_storable(refusal.field)[:200] if refusal.field else None,
            source="site",
            at=now,
        )
        outcomes = Counter(("site", _counted_name(item), "rejected") for item in items)
        self._record(org_id, now, outcomes, [rejection])

    def receive(
        self,
        admission: SiteAdmission,
        batch: SiteEventBatch,
        *,
        client_ip: str,
        user_agent: str,
        seconds_left: Callable[[], float],
    ) -> SiteEventsReceived:
        """Relay ``batch`` to the organization's pixel as website events with the browser's
        ``client_ip`` and ``user_agent``. Events our checks or the platform refuse are answered and kept
        (their id and the reason only); too old ones skipped. Raises ``EventsNotRelayed`` (503) when
        the platform cannot take them now and ``Conflict`` (409) when the organization has no
        connection or pixel to send them to."""
        assert admission.org_id is not None
        org_id = admission.org_id
        now = self.clock()
        outcomes: Counter[tuple[str, str, str]] = Counter()
        rejected: list[StoredRejection] = []
        ready: list[ServerEvent] = []
        delivered: list[tuple[str, str]] = []  # (event name, event id) of each event the platform took
        skipped = 0
        for item in batch.events:
            event = _server_event(item, admission, client_ip, user_agent, now)
            problem = check_event(event, now.timestamp())
            if problem is None and not origin_allowed(page_origin(item.url), admission.domains):
                reason = "url is not a page of the shop's declared domains"
                rejected.append(_rejection(item, reason, now, "url"))
                outcomes["site", item.event_name, "rejected"] += 1
            elif problem is None:
                ready.append(event)
            elif problem.verdict is Verdict.TOO_OLD:
                skipped += 1
                outcomes["site", item.event_name, "skipped"] += 1
            else:
                rejected.append(_rejection(item, f"{problem.field} {problem.reason}", now, problem.field))
                outcomes["site", item.event_name, "rejected"] += 1
        sent = 0
        if ready:
            try:
                sent = self._relay(
                    org_id, admission.test_event_code, ready, rejected, outcomes, delivered, seconds_left, now
                )
            except ServiceError:
                for event in ready:
                    outcomes["site", str(event["event_name"]), "failed"] += 1
                self._record(org_id, now, outcomes, rejected)
                raise
        try:
            self._record(org_id, now, outcomes, rejected, delivered)
        except Exception:
            if not sent:
                raise
            # The platform has the events: a failure to count them is no reason for the page to send
            # them again (it would change nothing), so it is answered what was sent, and logged.
            logger.exception("site events sent but not counted", extra={"sent": sent})
        logger.info("site events", extra={"received": len(batch.events), "sent": sent, "skipped": skipped})
        return SiteEventsReceived(
            received=len(batch.events),
            sent=sent,
            skipped=skipped,
            rejected=[
                SiteRejection(event_id=item.event_id or "", reason=item.reason, remedy=item.remedy)
                for item in rejected
            ],
        )

    def _relay(
        self,
        org_id: str,
        test_event_code: str | None,
        ready: list[ServerEvent],
        rejected: list[StoredRejection],
        outcomes: Counter[tuple[str, str, str]],
        delivered: list[tuple[str, str]],
        seconds_left: Callable[[], float],
        now: datetime,
    ) -> int:
        """Send ``ready`` to the organization's pixel; each event the platform refused is counted in
        ``outcomes`` and kept in ``rejected``, each it took is added to ``delivered``. The number sent."""
        try:
            graph, pixel_id = self.targets.target(org_id)
        except (NotFound, PlatformError) as exc:
            self.targets.forget(org_id)
            if isinstance(exc, PlatformError) and _transient(exc):
                raise _not_relayed(exc) from exc
            raise Conflict(
                f"The events were not sent: {exc.message}",
                field="siteKey",
                remedy=exc.remedy or "Connect the ad account on the dashboard's Ad account page.",
            ) from exc
        graph.limit_waits(lambda: seconds_left() - ANSWER_RESERVE_SECONDS)
        try:
            report = send_checked(
                lambda part: send_events(graph, pixel_id, part, test_event_code=test_event_code),
                iter(ready),
                now=lambda: self.clock().timestamp(),
                remedy=SITE_REMEDY,
            )
        except PlatformError as exc:
            self.targets.forget(org_id)
            if _transient(exc):
                raise _not_relayed(exc) from exc
            raise Conflict(
                f"The events were not sent: {exc.message}",
                field="siteKey",
                remedy=exc.remedy or "Reconnect the ad account on the dashboard's Ad account page.",
            ) from exc
        refused = {item.event_id for item in report.rejections}
        for event in ready:
            if event["event_id"] in refused:
                outcomes["site", str(event["event_name"]), "rejected"] += 1
            else:
                delivered.append((str(event["event_name"]), str(event["event_id"])))
        rejected.extend(StoredRejection(**asdict(item), source="site", at=now) for item in report.rejections)
        return report.sent

    def _record(
        self,
        org_id: str,
        now: datetime,
        outcomes: Counter[tuple[str, str, str]],
        rejected: Sequence[StoredRejection],
        delivered: Sequence[tuple[str, str]] = (),
    ) -> None:
        """Add ``outcomes`` (rejected, skipped, failed: each attempt) to the Events page's day, with each
        ``delivered`` (event name, event id) counted sent once: the platform keeps one event per name
        and id within its window (a reloaded thank-you page sends its purchase again), so the page
        counts the first, whichever request or day sent it (a marker each, ``Tally.mark_counted``, then
        one update of the day). Keep ``rejected`` for the page's list."""
        counts = Counter(outcomes)
        if delivered:
            names = {f"site:{name}:{event_id}": name for name, event_id in delivered}
            for marker in self.tally.mark_counted(org_id, list(names), now, DEDUP_WINDOW_SECONDS):
                counts["site", names[marker], "sent"] += 1
        self.tally.add_counts(org_id, now.date().isoformat(), dict(counts))
        if rejected:
            self.tally.add_rejections(org_id, rejected)


def _printable(value: Any, longest: int) -> bool:
    """Whether a refused body's ``value`` may be kept as it is: printable ASCII, ``longest`` at most."""
    return isinstance(value, str) and 0 < len(value) <= longest and value.isascii() and value.isprintable()


def _storable(text: str) -> str:
    """``text`` without what DynamoDB cannot store (a lone surrogate a JSON body may carry)."""
    return text.encode("utf-8", "replace").decode("utf-8")


def _counted_name(item: Any) -> str:
    """The event name a refused body's ``item`` is counted under: one the relay takes, else ``Other``."""
    name = item.get("eventName") if isinstance(item, dict) else None
    return name if name in SITE_EVENT_NAMES else "Other"


def _server_event(
    item: SiteEvent, admission: SiteAdmission, client_ip: str, user_agent: str, now: datetime
) -> ServerEvent:
    user_data = {
        key: value
        for key, value in {
            "client_ip_address": client_ip,
            "client_user_agent": user_agent,
            "fbp": item.fbp,
            "fbc": item.fbc,
        }.items()
        if value
    }
    return server_event(
        event_name=item.event_name,
        event_id=item.event_id,
        event_time=item.event_time if item.event_time is not None else int(now.timestamp()),
        action_source=ActionSource.WEBSITE,
        customer=Customer(user_data),
        custom_data=item.custom_data.as_custom_data() if item.custom_data else None,
        event_source_url=item.url,
    )


def _rejection(item: SiteEvent, reason: str, now: datetime, field: str) -> StoredRejection:
    return StoredRejection(
        event_id=item.event_id,
        event_name=item.event_name,
        reason=reason,
        remedy=SITE_REMEDY,
        field=field,
        source="site",
        at=now,
    )


def _transient(exc: PlatformError) -> bool:
    """A failure that waiting cures: throttling, a platform that did not answer, or one that failed on
    its side and kept failing through the client's retries (HTTP 5xx, codes 1 and 2, ``is_transient``),
    which the client raises as a generic error: the page may send the events again after the wait."""
    if isinstance(exc, PlatformThrottled | PlatformUnavailable):
        return True
    return exc.detail is not None and should_retry_error(exc.detail, idempotent=True)


def _not_relayed(exc: PlatformError) -> EventsNotRelayed:
    wait = exc.retry_after_seconds if isinstance(exc, PlatformThrottled) else None
    seconds = max(1, math.ceil(wait)) if wait else UNAVAILABLE_RETRY_SECONDS
    return EventsNotRelayed(
        "The advertising platform cannot take the events now.",
        remedy="Send them again after the wait (Retry-After): they keep their ids, so none counts twice.",
        retry_after_seconds=seconds,
    )
