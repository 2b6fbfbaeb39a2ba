"""Service configuration, read from the environment.

Every resource name and ARN reaches the code through an environment variable that ``template.yaml``
sets. Nothing here reads the environment at import time: ``shared.wiring.settings()`` builds the
settings on first use and keeps them; tests set variables and call ``wiring.reset()``.
"""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """All configuration of the service. Field ``x_y`` is read from env var ``X_Y``."""

    model_config = SettingsConfigDict(extra="ignore", frozen=True)

    stage: str = "local"
    aws_region: str = Field(default="eu-west-1", validation_alias="AWS_REGION")
    # Custom endpoint for every AWS client (moto server locally); None means the real AWS endpoints.
    aws_endpoint_url: str | None = None

    # DynamoDB tables
    main_table: str = "service-main"
    usage_table: str = "service-usage"
    idempotency_table: str = "service-idempotency"

    # S3 buckets and KMS
    artifacts_bucket: str = "service-artifacts"
    data_bucket: str = "service-data"
    kms_key_id: str = "alias/service"

    # Dashboard JWT (Cognito user pool is the issuer)
    jwt_issuer: str = "https://cognito-idp.eu-west-1.amazonaws.com/local"
    jwt_audience: str = "local-client"
    # Where the issuer's keys are served; defaults to the issuer's well-known JWKS path.
    jwks_url: str | None = None
    jwks_cache_seconds: int = 3600

    # Step Functions
    activation_state_machine_arn: str = ""

    # Advertising platform (Graph API)
    platform_graph_url: str = "https://graph.facebook.com"
    platform_dialog_url: str = "https://www.facebook.com"
    platform_api_version: str = "v25.0"
    platform_app_id: str = ""
    # Secrets Manager secret (ARN or name) holding {"app_secret", "oauth_state_key"}
    # (shared/repositories/secrets.py); the values themselves are never settings.
    platform_secrets_arn: str = ""
    platform_redirect_uri: str = "http://localhost:3000/platform-ads/connect/callback"
    platform_timeout_seconds: float = 30.0
    platform_max_retries: int = 5
    platform_backoff_base_seconds: float = 1.0
    # Pause when a usage header passes 95 % (or asks to wait) before calling again
    # (docs/platform-notes.md §8.3).
    platform_usage_pause_seconds: float = 60.0

    # Publish advert: hosts a checkout link template may point at (comma-separated; subdomains
    # included), and the platform's ads manager for Generate campaign with audience.
    checkout_allowed_domains: str = "buy.stripe.com,checkout.stripe.com"
    platform_ads_manager_url: str = "https://adsmanager.facebook.com"

    oauth_state_ttl_seconds: int = 600

    # Prediction freshness rules
    model_stale_after_days: int = 30
    model_retrain_after_days: int = 60
    drift_psi_threshold: float = 0.2

    @property
    def effective_jwks_url(self) -> str:
        return self.jwks_url or f"{self.jwt_issuer.rstrip('/')}/.well-known/jwks.json"
