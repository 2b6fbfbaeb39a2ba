"""When the client retries a Graph call, and how long it waits first.

The Graph API has no idempotency keys, so a retried create may create twice. The policy:

- **Idempotent calls** (reads, deletes, and uploads to ``/users``, which the platform de-duplicates)
  are retried on every transient failure: throttling codes, codes 1 and 2, ``is_transient: true``,
  HTTP 5xx without a specific error code, and any network error.
- **Non-idempotent calls** (creates, ``usersreplace``, the OAuth code exchange whose code is single
  use) are retried only when the call certainly did not run: a throttling code (the platform rejects
  throttled calls before executing them) or a connection error raised before the request was sent.
  Anything ambiguous (read timeout, 5xx, code 2) surfaces to the caller, which can check for the
  object before creating it again.

Waits are exponential with "equal jitter" (half fixed, half random) so parallel workers spread out,
and never shorter than what the usage headers ask for (``estimated_time_to_regain_access``).
"""

from __future__ import annotations

from dataclasses import dataclass

import httpx

from shared.platform.errors import TRANSIENT_CODES, GraphErrorDetail, PlatformError, PlatformUnavailable
from shared.platform.usage import UsageSnapshot

# Raised before any byte of the request left the machine, so even a create is safe to resend.
NOT_SENT_ERRORS: tuple[type[httpx.TransportError], ...] = (
    httpx.ConnectError,
    httpx.ConnectTimeout,
    httpx.PoolTimeout,
)


@dataclass(frozen=True)
class RetryPolicy:
    """Retry limits and wait lengths. ``max_wait_seconds`` caps any single sleep: a longer wait (an
    hour-long throttle, say) is handed back to the caller as ``PlatformThrottled`` so a Step
    Functions Wait can take it instead of a Lambda that is billed while it sleeps."""

    max_retries: int = 5
    backoff_base_seconds: float = 1.0
    max_backoff_seconds: float = 60.0
    max_wait_seconds: float = 300.0
    # Above this utilisation the platform is about to throttle: pause before the next call.
    usage_threshold_pct: float = 95.0
    usage_pause_seconds: float = 60.0

    def backoff_seconds(self, attempt: int, jitter: float) -> float:
        """Wait before retry number ``attempt + 1``; ``jitter`` is a random number in [0, 1)."""
        ceiling = min(self.max_backoff_seconds, self.backoff_base_seconds * 2**attempt)
        return ceiling / 2 + ceiling / 2 * jitter

    def usage_pause(self, usage: UsageSnapshot) -> float:
        """Seconds to pause before the next call given the latest usage (0 when below the threshold)."""
        regain_seconds = usage.regain_access_minutes * 60.0
        if usage.max_utilisation_pct > self.usage_threshold_pct or regain_seconds > 0:
            return max(self.usage_pause_seconds, regain_seconds)
        return 0.0

    def error_wait(
        self, attempt: int, jitter: float, detail: GraphErrorDetail, usage: UsageSnapshot
    ) -> float:
        """Wait before retrying after ``detail``: back-off, stretched for throttling by the usage headers."""
        wait = self.backoff_seconds(attempt, jitter)
        if detail.is_throttling:
            wait = max(wait, self.usage_pause(usage))
        return wait


def should_retry_error(detail: GraphErrorDetail, *, idempotent: bool) -> bool:
    """Whether a call that failed with ``detail`` may be sent again (see the module policy)."""
    if detail.is_throttling:
        return True
    if not idempotent:
        return False
    if detail.is_transient or detail.code in TRANSIENT_CODES:
        return True
    # A 5xx with a specific code (say 190) will not heal by itself; a bare 5xx or HTML page might.
    return detail.http_status >= 500 and detail.code is None


def should_retry_transport(error: httpx.TransportError, *, idempotent: bool) -> bool:
    """Whether a call that failed on the network may be sent again (see the module policy)."""
    return idempotent or isinstance(error, NOT_SENT_ERRORS)


def may_have_executed(error: PlatformError) -> bool:
    """Whether a call that raised ``error`` may still have run on the platform: its answer was lost
    (network error, HTTP 5xx, unknown or transient error) rather than a refusal. A create that may
    have run must be looked for before it is sent again (see the module policy)."""
    if isinstance(error, PlatformUnavailable):
        return True
    detail = error.detail
    if detail is None or detail.is_throttling:
        return False
    return detail.http_status >= 500 or detail.is_transient or detail.code in TRANSIENT_CODES
