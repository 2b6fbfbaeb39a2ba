"""Configuration of one payments sandbox instance: the platform's key, lifetimes and webhook retries."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class PaymentsSandboxConfig(BaseModel):
    """Everything that shapes a payments sandbox. All fields have working local defaults."""

    model_config = ConfigDict(extra="forbid")

    # The platform's test secret key, the only key the sandbox accepts (docs/payments-notes.md §1).
    secret_key: str = Field(default="sk_test_payments_sandbox_platform", pattern=r"^sk_test_\w+$")
    platform_account_id: str = "acct_1PaymentsSandbox0"
    platform_name: str = "Prediction Audience Service (payments sandbox)"
    country: str = "US"
    default_currency: str = "usd"
    # Answered in `Stripe-Version` when the caller sends none, and stamped on events.
    api_version: str = "2026-06-24.dahlia"
    # Base URL of the hosted pages (onboarding, checkout); None means the URL the API call came to.
    public_url: str | None = None

    # Account Links are single-use and short-lived (docs/payments-notes.md §2).
    account_link_seconds: int = Field(default=300, ge=1)
    # Checkout Session `expires_at`: default and allowed range after creation (docs/payments-notes.md §3).
    session_default_seconds: int = Field(default=24 * 3600, ge=1)
    session_min_seconds: int = Field(default=30 * 60, ge=0)
    session_max_seconds: int = Field(default=24 * 3600, ge=1)
    # Idempotency keys may be pruned once at least this old (docs/payments-notes.md §5).
    idempotency_seconds: int = Field(default=24 * 3600, ge=1)

    # Seconds after a failed delivery before each retry; after the last one the delivery has failed.
    # The provider retries test-mode deliveries "three times over a few hours" (docs/payments-notes.md §4.3).
    webhook_retry_delays: list[float] = Field(default_factory=lambda: [300.0, 1800.0, 7200.0])
    webhook_timeout_seconds: float = Field(default=10.0, gt=0)
    request_log_size: int = Field(default=2000, ge=1)
