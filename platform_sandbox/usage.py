"""Rate-limit accounting and the usage headers (docs/platform-notes.md §8.1, §8.2).

Calls are counted per ad account and business-use-case type in a rolling hour; a call beyond the
quota fails with the type's throttling code (80003 custom_audience, 80004 ads_management, subcode
2446079) and the BUC header says, in minutes, when access returns.
"""

from __future__ import annotations

import json
import math
from collections import deque
from enum import StrEnum

from platform_sandbox import errors
from platform_sandbox.config import BucQuotas

WINDOW_SECONDS = 3600
THROTTLE_SUBCODE = 2446079


class BucType(StrEnum):
    CUSTOM_AUDIENCE = "custom_audience"
    ADS_MANAGEMENT = "ads_management"


THROTTLE_CODES: dict[BucType, int] = {BucType.CUSTOM_AUDIENCE: 80003, BucType.ADS_MANAGEMENT: 80004}


class UsageMeter:
    """Counts calls in rolling one-hour windows and renders the usage headers."""

    def __init__(self, quotas: BucQuotas, app_calls_per_hour: int) -> None:
        self.quotas = quotas
        self.app_calls_per_hour = app_calls_per_hour
        self._app_calls: deque[float] = deque()
        self._buc_calls: dict[tuple[str, BucType], deque[float]] = {}

    def count_app_call(self, now: float) -> None:
        """Count one call against the app-level window behind ``X-App-Usage``."""
        _prune(self._app_calls, now)
        self._app_calls.append(now)

    def count_buc_call(self, now: float, account_id: str, buc: BucType, tier: str) -> None:
        """Count one call on an ad account, or raise the throttling ``GraphError`` if its quota is used up.

        A throttled call is not counted, so access returns once the oldest call leaves the window.
        """
        calls = self._calls(account_id, buc, now)
        if len(calls) >= self._quota(buc):
            raise errors.throttled(
                THROTTLE_CODES[buc], THROTTLE_SUBCODE, self.headers(now, account_id, buc, tier)
            )
        calls.append(now)

    def headers(self, now: float, account_id: str | None, buc: BucType | None, tier: str) -> dict[str, str]:
        """The ``X-App-Usage`` header, plus the ad-account and BUC headers for account calls."""
        app_pct = _percent(len(self._app_calls), self.app_calls_per_hour)
        headers = {
            "X-App-Usage": _dumps({"call_count": app_pct, "total_time": app_pct, "total_cputime": app_pct})
        }
        if account_id is None or buc is None:
            return headers
        management = self._calls(account_id, BucType.ADS_MANAGEMENT, now)
        headers["X-Ad-Account-Usage"] = _dumps(
            {
                "acc_id_util_pct": round(100 * len(management) / self.quotas.ads_management, 2),
                "reset_time_duration": _seconds_until_slot_frees(management, now),
                "ads_api_access_tier": tier,
            }
        )
        headers["X-Business-Use-Case-Usage"] = _dumps(
            {account_id: [self._buc_entry(account_id, buc, now, tier)]}
        )
        return headers

    def throttle_headers(
        self, account_id: str, buc: BucType, regain_minutes: int, tier: str
    ) -> dict[str, str]:
        """Headers of an injected throttle: the BUC at 100 % with the given time to regain access."""
        entry = {
            "type": buc.value,
            "call_count": 100,
            "total_cputime": 100,
            "total_time": 100,
            "estimated_time_to_regain_access": regain_minutes,
            "ads_api_access_tier": tier,
        }
        return {"X-Business-Use-Case-Usage": _dumps({account_id: [entry]})}

    def _buc_entry(self, account_id: str, buc: BucType, now: float, tier: str) -> dict[str, object]:
        calls = self._calls(account_id, buc, now)
        quota = self._quota(buc)
        pct = _percent(len(calls), quota)
        regain = math.ceil(_seconds_until_slot_frees(calls, now) / 60) if len(calls) >= quota else 0
        return {
            "type": buc.value,
            "call_count": pct,
            "total_cputime": pct,
            "total_time": pct,
            "estimated_time_to_regain_access": regain,
            "ads_api_access_tier": tier,
        }

    def _calls(self, account_id: str, buc: BucType, now: float) -> deque[float]:
        calls = self._buc_calls.setdefault((account_id, buc), deque())
        _prune(calls, now)
        return calls

    def _quota(self, buc: BucType) -> int:
        return int(getattr(self.quotas, buc.value))


def _prune(calls: deque[float], now: float) -> None:
    while calls and calls[0] <= now - WINDOW_SECONDS:
        calls.popleft()


def _percent(used: int, quota: int) -> int:
    return min(100, math.ceil(100 * used / quota))


def _seconds_until_slot_frees(calls: deque[float], now: float) -> int:
    return max(0, math.ceil(calls[0] + WINDOW_SECONDS - now)) if calls else 0


def _dumps(value: object) -> str:
    return json.dumps(value, separators=(",", ":"))
