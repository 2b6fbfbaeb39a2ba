"""The deploy-time settings the unit tests supply, as ``template.yaml`` does in AWS and the local stack
does locally (``shared/settings.py``: they have no defaults)."""

from __future__ import annotations

from typing import Any

from shared.settings import Settings

REGION = "eu-west-1"

# Variable -> value, for tests that set the environment (and the ARN only StartActivation gets).
ENVIRONMENT: dict[str, str] = {
    "AWS_REGION": REGION,
    "MAIN_TABLE": "service-main",
    "USAGE_TABLE": "service-usage",
    "IDEMPOTENCY_TABLE": "service-idempotency",
    "ARTIFACTS_BUCKET": "service-artifacts",
    "DATA_BUCKET": "service-data",
    "KMS_KEY_ID": "alias/service",
    "JWT_ISSUER": f"https://cognito-idp.{REGION}.amazonaws.com/{REGION}_pool",
    "JWT_AUDIENCE": "dashboard-client",
    "PLATFORM_APP_ID": "1234567890",
    "PLATFORM_REDIRECT_URI": "http://localhost:3001/connect-callback.html",
    "PLATFORM_SECRETS_ARN": "service/platform",
    "ACTIVATION_STATE_MACHINE_ARN": f"arn:aws:states:{REGION}:123456789012:stateMachine:activation",
    "CLOSURE_STATE_MACHINE_ARN": f"arn:aws:states:{REGION}:123456789012:stateMachine:closure",
    "DATA_SOURCE_STATE_MACHINE_ARN": f"arn:aws:states:{REGION}:123456789012:stateMachine:data-source",
    "USER_POOL_ID": f"{REGION}_pool",
    "AUDIENCE_SYNC_STATE_MACHINE_ARN": f"arn:aws:states:{REGION}:123456789012:stateMachine:audience-sync",
    "PAYMENTS_SECRETS_ARN": "service/payments",
    "DASHBOARD_URL": "http://localhost:3001",
    "SITE_EVENTS_URL": "http://localhost:3000/site-events",
}


def deployed_settings(**overrides: Any) -> Settings:
    """Settings with every deploy-time name set, and ``overrides`` (field names)."""
    names = {name.lower(): value for name, value in ENVIRONMENT.items() if name != "AWS_REGION"}
    return Settings(AWS_REGION=REGION, **{**names, **overrides})
