"""boto3 clients and DynamoDB tables for the configured region and endpoint.

Built here, cached in ``shared.wiring`` (one of each per container). The clients are typed with the
mypy-boto3 stubs, imported only for type checking: the stubs are a development dependency and the
functions never load them. ``AWS_ENDPOINT_URL`` points every client at moto locally and in tests.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, overload

import boto3
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


@overload
def client(service: Literal["dynamodb"], settings: Settings) -> DynamoDBClient: ...
@overload
def client(service: Literal["kms"], settings: Settings) -> KMSClient: ...
@overload
def client(service: Literal["s3"], settings: Settings) -> S3Client: ...
@overload
def client(service: Literal["secretsmanager"], settings: Settings) -> SecretsManagerClient: ...
@overload
def client(service: Literal["stepfunctions"], settings: Settings) -> SFNClient: ...
def client(service: str, settings: Settings) -> BaseClient:
    """A boto3 client for ``service`` in the configured region and endpoint."""
    built: BaseClient = boto3.client(
        service,
        region_name=settings.aws_region,
        endpoint_url=settings.aws_endpoint_url,
        config=_CONFIG,
    )
    return built


def dynamodb_resource(settings: Settings) -> DynamoDBServiceResource:
    """The DynamoDB resource, for ``Table`` objects."""
    resource: DynamoDBServiceResource = boto3.resource(
        "dynamodb", region_name=settings.aws_region, endpoint_url=settings.aws_endpoint_url, config=_CONFIG
    )
    return resource
