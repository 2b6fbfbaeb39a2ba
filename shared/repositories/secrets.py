"""The platform application's secrets: from Secrets Manager when deployed (cached), or given
directly in settings for tests."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities import parameters
from pydantic import BaseModel, Field

from shared.settings import Settings

SECRET_CACHE_SECONDS = 300


class PlatformSecrets(BaseModel, frozen=True):
    app_secret: str = Field(repr=False)
    oauth_state_key: str = Field(repr=False)


def load_platform_secrets(settings: Settings) -> PlatformSecrets:
    """The app secret and the OAuth state signing key.

    Settings values win (tests); otherwise both come from the secret named by
    ``PLATFORM_SECRETS_ARN``, cached for five minutes so rotation takes effect without a deploy.
    """
    if settings.platform_app_secret and settings.oauth_state_secret:
        return PlatformSecrets(
            app_secret=settings.platform_app_secret, oauth_state_key=settings.oauth_state_secret
        )
    if not settings.platform_secrets_arn:
        raise RuntimeError("PLATFORM_SECRETS_ARN is not set: the platform app secret cannot be read")
    value: Any = parameters.get_secret(
        settings.platform_secrets_arn, transform="json", max_age=SECRET_CACHE_SECONDS
    )
    return PlatformSecrets(
        app_secret=settings.platform_app_secret or str(value.get("app_secret", "")),
        oauth_state_key=settings.oauth_state_secret or str(value["oauth_state_key"]),
    )
