"""The platform secrets are read from Secrets Manager and kept for five minutes: a rotation is in use by
the first call after that window, with no deploy and no cold start."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import boto3
import pytest
from moto import mock_aws
from mypy_boto3_secretsmanager import SecretsManagerClient

from shared.repositories.secrets import SECRET_MAX_AGE, PlatformSecrets, PlatformSecretsSource

START = datetime(2026, 11, 22, 9, 0, tzinfo=UTC)


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def secretsmanager(monkeypatch: pytest.MonkeyPatch) -> Iterator[SecretsManagerClient]:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "test")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "test")
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    with mock_aws():
        yield boto3.client("secretsmanager", region_name="eu-west-1")


def _store(client: SecretsManagerClient, app_secret: str, oauth_state_key: str) -> str:
    value = json.dumps({"app_secret": app_secret, "oauth_state_key": oauth_state_key})
    return client.create_secret(Name="service/platform", SecretString=value)["ARN"]


def _rotate(client: SecretsManagerClient, arn: str, app_secret: str, oauth_state_key: str) -> None:
    value = json.dumps({"app_secret": app_secret, "oauth_state_key": oauth_state_key})
    client.put_secret_value(SecretId=arn, SecretString=value)


def test_the_secrets_are_read_from_secrets_manager(secretsmanager: SecretsManagerClient) -> None:
    # Given the platform secret in Secrets Manager
    arn = _store(secretsmanager, "app-1", "state-1")

    # When the source is asked for it
    secrets = PlatformSecretsSource(secretsmanager, arn, clock=Clock()).current()

    # Then both values are the stored ones
    assert secrets == PlatformSecrets(app_secret="app-1", oauth_state_key="state-1")


def test_a_rotated_secret_is_used_by_the_first_call_after_the_cache_window(
    secretsmanager: SecretsManagerClient,
) -> None:
    # Given a container that read the secret at START
    arn = _store(secretsmanager, "app-1", "state-1")
    clock = Clock()
    source = PlatformSecretsSource(secretsmanager, arn, clock=clock)
    assert source.current().app_secret == "app-1"

    # When the secret is rotated, and calls come just before and just after the window
    _rotate(secretsmanager, arn, "app-2", "state-2")
    clock.now = START + SECRET_MAX_AGE - timedelta(seconds=1)
    within_window = source.current()
    clock.now = START + SECRET_MAX_AGE
    after_window = source.current()

    # Then the copy serves until the window ends, and the next call uses the rotated secret
    assert within_window == PlatformSecrets(app_secret="app-1", oauth_state_key="state-1")
    assert after_window == PlatformSecrets(app_secret="app-2", oauth_state_key="state-2")


def test_within_the_window_secrets_manager_is_read_once(secretsmanager: SecretsManagerClient) -> None:
    # Given a source that read the secret at START
    arn = _store(secretsmanager, "app-1", "state-1")
    clock = Clock()
    source = PlatformSecretsSource(secretsmanager, arn, clock=clock)
    source.current()

    # When it is asked again within the window after the secret is deleted
    secretsmanager.delete_secret(SecretId=arn, ForceDeleteWithoutRecovery=True)
    clock.now = START + SECRET_MAX_AGE / 2
    secrets = source.current()

    # Then the kept copy answers, without a call to Secrets Manager
    assert secrets.app_secret == "app-1"


def test_the_secret_values_never_appear_in_a_repr(secretsmanager: SecretsManagerClient) -> None:
    # Given secrets read from Secrets Manager
    arn = _store(secretsmanager, "app-secret-value", "state-key-value")
    secrets = PlatformSecretsSource(secretsmanager, arn, clock=Clock()).current()

    # When they are printed (a log line, an error message)
    shown = repr(secrets)

    # Then neither value is in it
    assert "app-secret-value" not in shown
    assert "state-key-value" not in shown
