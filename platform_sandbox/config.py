"""Configuration of one sandbox instance: the simulated app, accepted versions, limits and quotas."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class BucQuotas(BaseModel):
    """Calls per ad account per rolling hour for each business-use-case type (docs/platform-notes.md §8.2).

    The defaults are the limited (development) tier's base values; tests lower them to reach
    throttling in a handful of calls.
    """

    model_config = ConfigDict(extra="forbid")

    custom_audience: int = Field(default=5000, ge=1)
    ads_management: int = Field(default=300, ge=1)


class SandboxConfig(BaseModel):
    """Everything that shapes a sandbox instance. All fields have working local defaults."""

    model_config = ConfigDict(extra="forbid")

    app_id: str = "1000000000000001"
    app_secret: str = "sandbox-app-secret"
    app_name: str = "Prediction Audience Service (sandbox)"
    # When true, every user-token call must carry appsecret_proof (docs/platform-notes.md §1.6).
    require_appsecret_proof: bool = False
    # Accepted Graph versions `/v{n}.0/`; below min -> 2635 (docs/platform-notes.md §9).
    min_version: int = 25
    max_version: int = 26
    # Where the OAuth dialog posts its Approve/Deny forms; None means the server's own URL.
    dialog_base: str | None = None
    # Named scenario loaded at start and on `POST /_admin/reset` (see platform_sandbox.scenarios).
    scenario: str = "default"

    code_ttl_seconds: int = 600
    # Tokens from a code exchange are short-lived, so clients must do the fb_exchange_token step.
    short_lived_token_seconds: int = 7200
    long_lived_token_seconds: int = 5_184_000
    data_access_seconds: int = 90 * 24 * 3600

    max_rows_per_upload: int = 10_000
    custom_audience_limit: int = 500
    min_seed_size: int = 100
    replace_session_seconds: int = 90 * 60

    # Conversions API (docs/platform-notes.md §11): events per request, how old an event may be (62
    # days for physical_store), how far ahead of the clock (our choice: the platform does not say), the
    # de-duplication window, and how many received events the admin API keeps per pixel.
    max_events_per_request: int = Field(default=1000, ge=1)
    event_max_age_days: int = Field(default=7, ge=1)
    physical_store_max_age_days: int = Field(default=62, ge=1)
    event_future_skew_seconds: int = Field(default=60, ge=0)
    dedup_window_seconds: int = Field(default=48 * 3600, ge=0)
    events_kept_per_pixel: int = Field(default=10_000, ge=1)

    quotas: BucQuotas = Field(default_factory=BucQuotas)
    # App-level calls per rolling hour behind X-App-Usage (docs/platform-notes.md §8.1).
    app_calls_per_hour: int = Field(default=200_000, ge=1)
    request_log_size: int = Field(default=2000, ge=1)
