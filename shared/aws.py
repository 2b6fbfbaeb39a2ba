"""boto3 clients and DynamoDB tables for the configured region and endpoint.

Built here, cached in ``shared.wiring`` (one of each per container). The clients are typed with the
mypy-boto3 stubs, imported only for type checking: the stubs are a development dependency and the
functions never load them. ``AWS_ENDPOINT_URL`` points every client at moto locally and in tests.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, overload

import botocore.session
from botocore.client import BaseClient
from botocore.config import Config

from shared.settings import Settings

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient, DynamoDBServiceResource
    from mypy_boto3_kms import KMSClient
    from mypy_boto3_s3 import S3Client
    from mypy_boto3_secretsmanager import SecretsManagerClient
    from mypy_boto3_stepfunctions import SFNClient

_CONFIG = Config(retries={"mode": "standard", "max_attempts": 3}, connect_timeout=3, read_timeout=10)
# S3 signs with Signature Version 4 in every region, presigned links included: S3 refuses a SigV2 link
# to an SSE-KMS object (every object of the service), and botocore's default still presigns with SigV2.
# Links name the bucket's regional host (bucket.s3.<region>.amazonaws.com): the global one answers a
# new bucket's requests with a redirect for up to a day, which a browser's upload does not follow.
_S3_CONFIG = _CONFIG.merge(Config(signature_version="s3v4", s3={"addressing_style": "virtual"}))
# A custom endpoint (moto locally) is addressed by path: the bucket cannot be its subdomain.
_S3_CUSTOM_ENDPOINT_CONFIG = _CONFIG.merge(Config(signature_version="s3v4", s3={"addressing_style": "path"}))


@overload
def client(
    service: Literal["dynamodb"], settings: Settings, from_session: botocore.session.Session
) -> DynamoDBClient: ...
@overload
def client(
    service: Literal["kms"], settings: Settings, from_session: botocore.session.Session
) -> KMSClient: ...
@overload
def client(
    service: Literal["s3"], settings: Settings, from_session: botocore.session.Session
) -> S3Client: ...
@overload
def client(
    service: Literal["secretsmanager"], settings: Settings, from_session: botocore.session.Session
) -> SecretsManagerClient: ...
@overload
def client(
    service: Literal["stepfunctions"], settings: Settings, from_session: botocore.session.Session
) -> SFNClient: ...
def client(service: str, settings: Settings, from_session: botocore.session.Session) -> BaseClient:
    """A client for ``service`` in the configured region and endpoint, from ``from_session``.

    Built by botocore directly: the same client boto3 would build, without boto3's import of its
    resource and S3-transfer layers (``upload_file`` and friends), which no function uses; that
    import is a large share of a cold start. Credentials come from the usual chain. S3 clients sign
    with SigV4, presigned links included.
    """
    built: BaseClient = from_session.create_client(
        service,
        region_name=settings.aws_region,
        endpoint_url=settings.aws_endpoint_url,
        config=_config(service, settings),
    )
    return built


def _config(service: str, settings: Settings) -> Config:
    if service != "s3":
        return _CONFIG
    return _S3_CONFIG if settings.aws_endpoint_url is None else _S3_CUSTOM_ENDPOINT_CONFIG


def session() -> botocore.session.Session:
    """A botocore session (credentials chain, loaded service data); ``shared.wiring`` keeps one."""
    return botocore.session.get_session()


def dynamodb_resource(settings: Settings) -> DynamoDBServiceResource:
    """The DynamoDB resource, for ``Table`` objects (functions that query; predict does not)."""
    import boto3

    resource: DynamoDBServiceResource = boto3.resource(
        "dynamodb", region_name=settings.aws_region, endpoint_url=settings.aws_endpoint_url, config=_CONFIG
    )
    return resource
