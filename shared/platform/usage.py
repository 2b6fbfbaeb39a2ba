"""Rate-limit usage reported by the platform in response headers (docs/platform-notes.md §8).

Every Graph response may carry up to three JSON headers: ``X-App-Usage`` (app-wide),
``X-Ad-Account-Usage`` (per ad account) and ``X-Business-Use-Case-Usage`` (per business object and
use-case type). They are parsed into one ``UsageSnapshot`` which the client uses to back off and the
service stores on the connection record.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, computed_field

from shared.observability import logger

APP_USAGE_HEADER = "x-app-usage"
AD_ACCOUNT_USAGE_HEADER = "x-ad-account-usage"
BUSINESS_USE_CASE_USAGE_HEADER = "x-business-use-case-usage"


class AppUsage(BaseModel):
    """``X-App-Usage``: percentages of the app-level limit."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    call_count: float = 0
    total_time: float = 0
    total_cputime: float = 0


class AdAccountUsage(BaseModel):
    """``X-Ad-Account-Usage``: percentage of the ad account's limit and seconds until it resets."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    acc_id_util_pct: float = 0
    reset_time_duration: int = 0
    ads_api_access_tier: str | None = None


class BusinessUseCaseUsage(BaseModel):
    """One entry of ``X-Business-Use-Case-Usage`` (one business object, one use-case type)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    business_object_id: str
    type: str
    call_count: float = 0
    total_time: float = 0
    total_cputime: float = 0
    # Minutes, not seconds (docs/platform-notes.md §8.1).
    estimated_time_to_regain_access: int = 0
    ads_api_access_tier: str | None = None


class UsageSnapshot(BaseModel):
    """The usage the platform reported on one response, with the figures back-off decisions need."""

    model_config = ConfigDict(frozen=True)

    captured_at: datetime
    app: AppUsage | None = None
    ad_account: AdAccountUsage | None = None
    business_use_cases: tuple[BusinessUseCaseUsage, ...] = ()

    @computed_field  # type: ignore[prop-decorator]
    @property
    def max_utilisation_pct(self) -> float:
        """The highest percentage across all headers; the platform throttles when any reaches 100."""
        figures: list[float] = [0.0]
        if self.app is not None:
            figures += [self.app.call_count, self.app.total_time, self.app.total_cputime]
        if self.ad_account is not None:
            figures.append(self.ad_account.acc_id_util_pct)
        for entry in self.business_use_cases:
            figures += [entry.call_count, entry.total_time, entry.total_cputime]
        return max(figures)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def regain_access_minutes(self) -> int:
        """The longest ``estimated_time_to_regain_access`` of any use case, in minutes (0 = not blocked)."""
        return max((entry.estimated_time_to_regain_access for entry in self.business_use_cases), default=0)


def parse_usage(headers: Mapping[str, str], captured_at: datetime) -> UsageSnapshot:
    """Build a ``UsageSnapshot`` from response headers (case-insensitive mapping, e.g. ``httpx.Headers``).

    A missing or malformed header yields an empty section rather than an error: usage is advisory and
    must never fail an otherwise successful call.
    """
    app = _parse_section(headers.get(APP_USAGE_HEADER), AppUsage)
    ad_account = _parse_section(headers.get(AD_ACCOUNT_USAGE_HEADER), AdAccountUsage)
    return UsageSnapshot(
        captured_at=captured_at,
        app=app,
        ad_account=ad_account,
        business_use_cases=_parse_business_use_cases(headers.get(BUSINESS_USE_CASE_USAGE_HEADER)),
    )


def _load_json_object(raw: str | None) -> dict[str, Any] | None:
    if not raw:
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        logger.warning("Ignoring malformed platform usage header")
        return None
    return value if isinstance(value, dict) else None


def _parse_section[T: BaseModel](raw: str | None, model: type[T]) -> T | None:
    value = _load_json_object(raw)
    if value is None:
        return None
    try:
        return model.model_validate(value)
    except ValidationError:
        logger.warning("Ignoring malformed platform usage header", extra={"header_model": model.__name__})
        return None


def _parse_business_use_cases(raw: str | None) -> tuple[BusinessUseCaseUsage, ...]:
    value = _load_json_object(raw)
    if value is None:
        return ()
    entries: list[BusinessUseCaseUsage] = []
    # Keys are business object ids (ad account, page, ...); each maps to a list of per-type entries.
    for object_id, items in value.items():
        if not isinstance(items, list):
            continue
        for item in items:
            if not isinstance(item, dict):
                continue
            try:
                entries.append(BusinessUseCaseUsage.model_validate({**item, "business_object_id": object_id}))
            except ValidationError:
                logger.warning("Ignoring malformed business use-case usage entry")
    return tuple(entries)
