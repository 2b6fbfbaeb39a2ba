"""Usage metering: every prediction is counted against its API key and model (billing metadata,
docs/service-contract.md §4.1), a key's optional daily quota is enforced, and the dashboard reads it
back as a report.

Days are UTC days: a quota resets at midnight UTC and the report's dates are UTC dates.

The prediction endpoint calls, in this order: ``record_prediction_usage`` before scoring (it may
raise ``QuotaExceeded``), then ``record_model_prediction`` once the model has answered, and puts
``UsageOutcome.headers()`` on its response.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Protocol

from pydantic import Field

from shared.clock import iso
from shared.errors import QuotaExceeded, ValidationFailed
from shared.records.api_keys import StoredApiKey
from shared.records.principals import ApiKeyPrincipal
from shared.records.usage import KeyUsageDay
from shared.wire_models import CamelModel

USAGE_REMAINING_HEADER = "X-Service-Usage-Remaining"
MAX_REPORT_DAYS = 92  # a quarter: long enough for monthly billing, short enough for one dashboard read
DEFAULT_REPORT_DAYS = 30


class UsageCounter(Protocol):
    def add_prediction(
        self, principal: ApiKeyPrincipal, model_name: str, day: date, now: datetime, *, limit: int | None
    ) -> int | None: ...


class ModelCounter(Protocol):
    def record_prediction(self, org_id: str, name: str, now: datetime) -> int: ...


class UsageReader(Protocol):
    def days_for_key(
        self, org_id: str, key_id: str, period: tuple[date, date] | None = None
    ) -> list[KeyUsageDay]: ...


class KeyLister(Protocol):
    def list_for_org(self, org_id: str) -> list[StoredApiKey]: ...


@dataclass(frozen=True)
class UsageOutcome:
    """What metering one prediction decided."""

    predictions_today: int  # the key's predictions this UTC day, this one included
    remaining: int | None  # predictions left today under the key's quota; None when it has none
    resets_at: datetime  # when the day's count starts again (next midnight UTC)

    def headers(self) -> dict[str, str]:
        """Response headers telling the client its remaining quota (none for an unlimited key)."""
        return {} if self.remaining is None else {USAGE_REMAINING_HEADER: str(self.remaining)}


def utc_day(now: datetime) -> date:
    """The UTC calendar day of ``now`` (the day usage is counted on)."""
    return now.astimezone(UTC).date()


def next_reset(now: datetime) -> datetime:
    """The next midnight UTC after ``now``, when daily counts and quotas start again."""
    return datetime.combine(utc_day(now) + timedelta(days=1), time.min, tzinfo=UTC)


def record_prediction_usage(
    principal: ApiKeyPrincipal, model_name: str, now: datetime, *, usage: UsageCounter
) -> UsageOutcome:
    """Count one prediction of ``model_name`` for the calling key, within its daily quota.

    In: the API-key principal (its ``daily_quota`` decides the limit), the model name, the time.
    Out: the key's count for the day and what is left of its quota. Raises ``QuotaExceeded`` (429)
    without counting when the quota for the day is already spent. The count is one atomic write, so
    concurrent calls neither lose a count nor exceed the quota.
    """
    quota = principal.daily_quota
    resets_at = next_reset(now)
    count = usage.add_prediction(principal, model_name, utc_day(now), now, limit=quota)
    if count is None:
        raise quota_exceeded(principal, now)
    remaining = None if quota is None else max(quota - count, 0)
    return UsageOutcome(predictions_today=count, remaining=remaining, resets_at=resets_at)


def quota_exceeded(principal: ApiKeyPrincipal, now: datetime) -> QuotaExceeded:
    """The 429 for a key whose daily quota is spent: the quota, when it resets (also as its
    ``retry_after_seconds``, the Retry-After header), what to do, and ``X-Service-Usage-Remaining: 0``."""
    quota = principal.daily_quota
    resets_at = next_reset(now)
    return QuotaExceeded(
        f"The daily quota of {quota} predictions for API key {principal.prefix} is spent; "
        f"it resets at {iso(resets_at)} (midnight UTC).",
        remedy=(
            "Retry after the reset, or ask an administrator of your organization to create a key "
            "with a higher daily quota in the dashboard."
        ),
        details={"daily_quota": quota, "resets_at": iso(resets_at)},
        # Retry-After, as the service's other 429s send it: the seconds until the reset; and the
        # usage header every answer to a key with a quota carries (docs/service-contract.md §4.1).
        retry_after_seconds=(resets_at - now).total_seconds(),
        headers={USAGE_REMAINING_HEADER: "0"},
    )


def record_model_prediction(
    principal: ApiKeyPrincipal, model_name: str, now: datetime, *, models: ModelCounter
) -> int:
    """Add one prediction to the model's ``usageStats.total_predictions`` and set its
    ``last_prediction_date`` (docs/service-contract.md §2.1). The model must exist. Returns the model's
    new total."""
    return models.record_prediction(principal.org_id, model_name, now)


class UsageRow(CamelModel):
    day: date = Field(alias="date", description="UTC day.")
    key_id: str
    prefix: str = Field(description="Display prefix of the API key, as recorded when it was used.")
    label: str = Field(description="Label of the API key, as recorded when it was used.")
    model: str
    predictions: int


class UsageTotals(CamelModel):
    predictions: int
    by_key: dict[str, int] = Field(description="Predictions per key id.")
    by_model: dict[str, int] = Field(description="Predictions per model name.")


class UsageReport(CamelModel):
    start: date = Field(alias="from", description="First UTC day of the report.")
    end: date = Field(alias="to", description="Last UTC day of the report (inclusive).")
    model: str | None = Field(description="The model the report is limited to, if any.")
    rows: list[UsageRow] = Field(description="Predictions per day, key and model; days without use omitted.")
    totals: UsageTotals


def report_period(start: date | None, end: date | None, today: date) -> tuple[date, date]:
    """The report's first and last day. ``end`` defaults to today and ``start`` to the 30 days
    ending on ``end``. ``ValidationFailed`` naming the field when ``to`` is before ``from`` or the
    period is longer than 92 days."""
    last = end or today
    first = start or last - timedelta(days=DEFAULT_REPORT_DAYS - 1)
    if last < first:
        raise ValidationFailed(
            f"to ({last.isoformat()}) is before from ({first.isoformat()}).",
            field="to",
            remedy="Send a 'to' date on or after 'from' (YYYY-MM-DD).",
        )
    days = (last - first).days + 1
    if days > MAX_REPORT_DAYS:
        raise ValidationFailed(
            f"The period from {first.isoformat()} to {last.isoformat()} is {days} days; "
            f"a report covers at most {MAX_REPORT_DAYS} days.",
            field="to" if end is not None else "from",
            remedy=f"Ask for at most {MAX_REPORT_DAYS} days at a time.",
        )
    return first, last


def usage_report(
    org_id: str,
    *,
    start: date | None,
    end: date | None,
    model: str | None,
    today: date,
    keys: KeyLister,
    usage: UsageReader,
) -> UsageReport:
    """The organization's predictions per day, key and model over a period (see ``report_period``),
    optionally for one model only. Revoked keys are included: their past use is still billable."""
    period = report_period(start, end, today)
    rows = [
        UsageRow(
            day=day.day,
            key_id=day.key_id,
            prefix=day.prefix,
            label=day.label,
            model=name,
            predictions=count,
        )
        for key in keys.list_for_org(org_id)
        for day in usage.days_for_key(org_id, key.key_id, period)
        for name, count in day.by_model.items()
        if model is None or name == model
    ]
    rows.sort(key=lambda r: (r.day, r.label, r.key_id, r.model))
    by_key: Counter[str] = Counter()
    by_model: Counter[str] = Counter()
    for row in rows:
        by_key[row.key_id] += row.predictions
        by_model[row.model] += row.predictions
    return UsageReport(
        start=period[0],
        end=period[1],
        model=model,
        rows=rows,
        totals=UsageTotals(predictions=sum(by_key.values()), by_key=dict(by_key), by_model=dict(by_model)),
    )
