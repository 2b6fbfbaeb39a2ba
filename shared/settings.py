"""Service configuration, read from the environment.

Every resource name and ARN reaches the code through an environment variable that ``template.yaml``
sets. They fail closed: a deploy-time name has no default, so a function whose variable is missing
fails on its first use of the settings, naming the variable, instead of calling a table, bucket or
key that does not exist (or a development one). The local stack sets them from the resources it
creates, the tests from theirs; ``tests/unit/test_template.py`` checks that the template sets every
variable each function reads.

Nothing here reads the environment at import time: ``shared.wiring`` builds the settings on first
use and keeps them; tests set variables and call ``wiring.reset()``.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

# A deploy-time name: required, and not empty.
Name = Annotated[str, Field(min_length=1)]


class Settings(BaseSettings):
    """All configuration of the service. Field ``x_y`` is read from env var ``X_Y``."""

    model_config = SettingsConfigDict(extra="ignore", frozen=True)

    stage: str = "local"
    # Set by the Lambda runtime in AWS.
    aws_region: Name = Field(validation_alias="AWS_REGION")
    # Custom endpoint for every AWS client (moto server locally); None means the real AWS endpoints.
    aws_endpoint_url: str | None = None

    # DynamoDB tables
    main_table: Name
    usage_table: Name
    idempotency_table: Name

    # S3 buckets and KMS
    artifacts_bucket: Name
    data_bucket: Name
    kms_key_id: Name

    # Dashboard JWT (Cognito user pool is the issuer; the audience is its app client)
    jwt_issuer: Name
    jwt_audience: Name
    # Where the issuer's keys are served; defaults to the issuer's well-known JWKS path.
    jwks_url: str | None = None
    jwks_cache_seconds: int = 3600

    # Data source: the largest file a sync reads (bytes); a sync holds the files in memory.
    data_source_max_file_bytes: int = 1_073_741_824
    # The largest audience list uploaded as CSV (bytes; about 57 million users at 75 bytes a row). The
    # activation reads it in the engine, on disk (issue 20: a 30M-user list); S3 takes 5 GB in one POST.
    audience_upload_max_bytes: int = 4_294_967_296
    # The most users one NormaliseAndHash task hashes: a larger list is split into parts of about this
    # many users, one a task (shared.activation.pipeline.PART_USERS; smaller in tests).
    activation_part_users: int = 2_000_000
    # The engine's memory limit in MB where a function fixes it (the activation steps' and the sync
    # job's), whatever the function's memory: a task peaks at the engine's limit plus Python's arrays,
    # and more memory is more CPU on Lambda. Unset, the engine takes half the function's memory
    # (``shared.dataplane.engine``).
    engine_memory_mb: int | None = Field(default=None, ge=128)
    # The bytes of an uploaded list one SelectUsers task reads at most (whole records: a little more):
    # a larger list is read in chunks, one a task (shared.activation.pipeline.CHUNK_BYTES).
    activation_chunk_bytes: int = 128 << 20

    # Advertising platform (Graph API)
    platform_graph_url: str = "https://graph.facebook.com"
    platform_dialog_url: str = "https://www.facebook.com"
    platform_api_version: str = "v25.0"
    # The application's id and the redirect URI registered with it: template parameters, which may
    # be left empty at deploy (the service then serves predictions but cannot connect an account).
    platform_app_id: str
    platform_redirect_uri: str
    # Secrets Manager secret (ARN or name) holding {"app_secret", "oauth_state_key"}
    # (shared/repositories/secrets.py); the values themselves are never settings.
    platform_secrets_arn: Name
    platform_timeout_seconds: float = 30.0
    platform_max_retries: int = 5
    platform_backoff_base_seconds: float = 1.0
    # Pause when a usage header passes 95 % (or asks to wait) before calling again
    # (docs/platform-notes.md §8.3).
    platform_usage_pause_seconds: float = 60.0

    # Generate campaign with audience: the platform's ads manager.
    platform_ads_manager_url: str = "https://adsmanager.facebook.com"

    oauth_state_ttl_seconds: int = 600

    # Prediction freshness rules
    model_stale_after_days: int = 30
    # Models the predict function loads before its SnapStart snapshot: "org_id/model_name,..."
    # (empty: none; the snapshot then holds the imports and clients only).
    predict_warm_models: str = ""
    model_retrain_after_days: int = 60
    drift_psi_threshold: float = 0.2

    # The stranded-upload sweeper: an audience left creating/uploading this long without a write is
    # resumed (at most this many times) or failed. An hour is far beyond the 29 s a synchronous create
    # lives and the Wait of an activation's throttled step.
    stranded_upload_after_minutes: int = 60
    stranded_upload_max_resumes: int = 3

    @property
    def effective_jwks_url(self) -> str:
        return self.jwks_url or f"{self.jwt_issuer.rstrip('/')}/.well-known/jwks.json"


class ActivationSettings(BaseSettings):
    """What only the function that starts activations reads. Not among the global variables: the
    state machine's tasks are functions, so a global naming the state machine would make it depend
    on itself."""

    model_config = SettingsConfigDict(extra="ignore", frozen=True)

    activation_state_machine_arn: Name


class AudienceSyncSettings(BaseSettings):
    """What only the functions that start audience syncs read (the scheduler, refresh now): not a
    global, for the reason ``ActivationSettings`` gives."""

    model_config = SettingsConfigDict(extra="ignore", frozen=True)

    audience_sync_state_machine_arn: Name


class DataSourceSettings(BaseSettings):
    """What only the function that starts syncs reads (not a global, for the reason
    ``ActivationSettings`` gives: the data source state machine's tasks are functions)."""

    model_config = SettingsConfigDict(extra="ignore", frozen=True)

    data_source_state_machine_arn: Name


class ClosureSettings(BaseSettings):
    """What only the function that starts account closures reads (not a global, for the reason
    ``ActivationSettings`` gives: the closure state machine's task is a function)."""

    model_config = SettingsConfigDict(extra="ignore", frozen=True)

    closure_state_machine_arn: Name


class UserPoolSettings(BaseSettings):
    """What only the account closure step reads: the user pool whose users a closure disables and
    deletes."""

    model_config = SettingsConfigDict(extra="ignore", frozen=True)

    user_pool_id: Name


class PaymentsSettings(BaseSettings):
    """What only the functions that call the card-payment provider read (docs/payments-notes.md)."""

    model_config = SettingsConfigDict(extra="ignore", frozen=True)

    # Secrets Manager secret (ARN or name) holding {"secret_key", "webhook_secret",
    # "onboarding_state_key"} (shared/repositories/secrets.py); the values themselves are never settings.
    payments_secrets_arn: Name
    # The provider's API base (the payments sandbox locally).
    payments_api_url: str = "https://api.stripe.com"
    # The longest one call to the provider may take, and how often the SDK retries a failed one.
    payments_timeout_seconds: float = 20.0
    payments_max_retries: int = 2
    # How long a payments onboarding link and its state may be used.
    payments_onboarding_ttl_seconds: int = 1800


class DashboardSettings(BaseSettings):
    """The dashboard's address, which only the function that starts payments onboarding reads: the
    provider's pages come back to its ``payments-callback.html``."""

    model_config = SettingsConfigDict(extra="ignore", frozen=True)

    dashboard_url: Name


class SiteEventsSettings(BaseSettings):
    """The public site events endpoint's limits (issue 21, item 3): per site key, at most
    ``site_events_per_window`` events each ``site_events_window_seconds``, and at most
    ``site_events_per_request`` events in one request."""

    model_config = SettingsConfigDict(extra="ignore", frozen=True)

    site_events_per_window: int = 100
    site_events_window_seconds: int = 10
    site_events_per_request: int = 20


class SiteSnippetSettings(BaseSettings):
    """The public site events endpoint's address, which the snippet the dashboard shows posts to (the
    endpoint's own function does not read it: its API names the function, not the other way round)."""

    model_config = SettingsConfigDict(extra="ignore", frozen=True)

    site_events_url: Name


class ActionLimitSettings(BaseSettings):
    """Each organization's limits on the expensive dashboard actions (issue 25, item 4): at most
    ``org_limit_<action>`` starts in each window of ``org_limit_<action>_window_seconds``
    (``shared.limits.actions``; README, "Limits")."""

    model_config = SettingsConfigDict(extra="ignore", frozen=True)

    # A live preview follows the segment slider (the dashboard waits 350 ms after the last move).
    org_limit_targeting_previews: int = Field(default=60, ge=1)
    org_limit_targeting_previews_window_seconds: int = Field(default=60, ge=1)
    # A retrain syncs the data again and trains both models (and 409s while one is under way).
    org_limit_retrains: int = Field(default=6, ge=1)
    org_limit_retrains_window_seconds: int = Field(default=3600, ge=1)
    # Audience creates and activations together: each hashes and uploads a whole audience.
    org_limit_activations: int = Field(default=30, ge=1)
    org_limit_activations_window_seconds: int = Field(default=3600, ge=1)
