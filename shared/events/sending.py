"""Sending a stream of built events in batches of the documented maximum (docs/platform-notes.md §11).

Each event is checked as it joins a batch (``shared.events.checks``): one too old is skipped, one
malformed rejected, and neither goes out. Should the platform still refuse a batch (code 100: nothing
of it was kept), the batch is split in halves and each half sent again, down to the single events the
platform refuses, which are rejected with the platform's own reason: only what can succeed is sent,
in the order given. Every event carries an ``event_id``, so a part sent twice (a retry, a resumed
run) is kept once by the platform.

Events are consumed lazily, one batch at a time: memory holds one batch, never the stream.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from shared.events.building import ServerEvent
from shared.events.checks import Verdict, check_event
from shared.observability import logger
from shared.platform.errors import EventsRefused
from shared.platform.events import MAX_EVENTS_PER_CALL, EventsReceived

# Sends one batch to the pixel (``shared.platform.events.send_events`` with its client and pixel bound).
SendBatch = Callable[[Sequence[ServerEvent]], EventsReceived]
# What to do about an order's purchase our own check keeps back.
ORDER_REMEDY = "Correct the order's data in the shop's export; the next sync sends it."
# The report keeps this many rejections in full; the rest are only counted by reason.
MAX_REJECTIONS_KEPT = 100
# Extra calls one refused batch may spend on finding its bad events: halving a batch of 1,000 down to
# one bad event takes 20; a batch whose every part is refused is given up well before 2,000.
MAX_SPLIT_CALLS = 64


@dataclass(frozen=True, slots=True)
class Rejection:
    """One event that was not sent, and why: the field and reason of our check, or the platform's own
    words (``platform_code``, ``platform_subcode``, ``fbtrace_id`` for support) and what to do."""

    event_id: str | None
    event_name: str | None
    reason: str
    remedy: str
    field: str | None = None
    platform_code: int | None = None
    platform_subcode: int | None = None
    fbtrace_id: str | None = None


@dataclass
class SendReport:
    """What became of a stream of events.

    ``processed`` counts the events of the stream fully dealt with, in order: after an interruption
    (an error other than a refusal), a resumed run starts after them and nothing it sends again counts
    twice. ``sent`` is what the platform said it received; ``calls`` the requests made.
    """

    processed: int = 0
    sent: int = 0
    calls: int = 0
    skipped_too_old: int = 0
    rejected: int = 0
    reasons: Counter[str] = field(default_factory=Counter)
    rejections: list[Rejection] = field(default_factory=list)

    def reject(self, rejection: Rejection, key: str) -> None:
        self.rejected += 1
        self.reasons[key] += 1
        if len(self.rejections) < MAX_REJECTIONS_KEPT:
            self.rejections.append(rejection)


def send_checked(
    send: SendBatch,
    events: Iterable[ServerEvent],
    *,
    now: Callable[[], float],
    report: SendReport | None = None,
    batch_size: int = MAX_EVENTS_PER_CALL,
    remedy: str = ORDER_REMEDY,
) -> SendReport:
    """Check and send ``events`` (in order, ``batch_size`` at most per call) through ``send``.

    ``now`` gives the Unix time each event is checked at; ``remedy`` is what to do about an event our
    own check keeps back (where the event came from decides it). Returns the report (``report`` when given,
    filled as it goes, so a caller catching an interruption still reads how far it got). Raises the
    platform client's errors other than a refusal (throttling past the wait the caller allows, an
    unavailable platform, a token refused) as they come.
    """
    report = report if report is not None else SendReport()
    batch: list[ServerEvent] = []
    taken = 0  # events of the stream behind the current batch, kept back ones included
    for event in events:
        taken += 1
        problem = check_event(event, now())
        if problem is None:
            batch.append(event)
        elif problem.verdict is Verdict.TOO_OLD:
            report.skipped_too_old += 1
            report.reasons[problem.verdict.value] += 1
        else:
            report.reject(
                Rejection(
                    event_id=_text(event.get("event_id")),
                    event_name=_text(event.get("event_name")),
                    reason=f"{problem.field} {problem.reason}",
                    remedy=remedy,
                    field=problem.field,
                ),
                f"{problem.verdict.value}:{problem.field}",
            )
        if len(batch) == batch_size:
            _deliver(send, batch, report)
            report.processed += taken
            batch, taken = [], 0
    if batch:
        _deliver(send, batch, report)
    report.processed += taken
    return report


def _deliver(send: SendBatch, batch: list[ServerEvent], report: SendReport) -> None:
    """Send one batch; halve what the platform refuses until each refused event stands alone."""
    parts = [batch]
    splits_left = MAX_SPLIT_CALLS
    while parts:
        part = parts.pop(0)
        report.calls += 1
        try:
            received = send(part)
        except EventsRefused as refusal:
            if len(part) > 1 and splits_left >= 2:
                splits_left -= 2
                middle = len(part) // 2
                parts[:0] = [part[:middle], part[middle:]]
                continue
            _refused(part, refusal, report)
            continue
        report.sent += received.events_received


def _refused(part: Sequence[ServerEvent], refusal: EventsRefused, report: SendReport) -> None:
    detail = refusal.detail
    said = (detail.user_message or detail.user_title or detail.message) if detail else refusal.message
    logger.warning(
        "Platform refused events",
        extra={
            "events": len(part),
            "platform_code": detail.code if detail else None,
            "platform_subcode": detail.subcode if detail else None,
            "fbtrace_id": detail.fbtrace_id if detail else None,
        },
    )
    for event in part:
        report.reject(
            Rejection(
                event_id=_text(event.get("event_id")),
                event_name=_text(event.get("event_name")),
                reason=f"{refusal.message} The platform said: {said}",
                remedy=refusal.remedy or "Report this exact message to support.",
                platform_code=detail.code if detail else None,
                platform_subcode=detail.subcode if detail else None,
                fbtrace_id=detail.fbtrace_id if detail else None,
            ),
            f"refused:{detail.code if detail else None}/{detail.subcode if detail else None}",
        )


def _text(value: object) -> str | None:
    return None if value is None else str(value)
