"""boto3 clients and resources, built once per process from settings.

Clients are created on first use (not at import) so cold starts pay only for what a function uses,
and so tests and the local stack can point them at moto via ``AWS_ENDPOINT_URL``.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import boto3
from botocore.config import Config

from shared.settings import get_settings

_CONFIG = Config(retries={"mode": "standard", "max_attempts": 3}, connect_timeout=3, read_timeout=10)


@cache
def client(service: str) -> Any:
    """A boto3 client for ``service`` in the configured region and endpoint."""
    settings = get_settings()
    return boto3.client(
        service,
        region_name=settings.aws_region,
        endpoint_url=settings.aws_endpoint_url,
        config=_CONFIG,
    )


@cache
def dynamodb_table(name: str) -> Any:
    """A DynamoDB ``Table`` resource for ``name``."""
    settings = get_settings()
    resource = boto3.resource(
        "dynamodb", region_name=settings.aws_region, endpoint_url=settings.aws_endpoint_url, config=_CONFIG
    )
    return resource.Table(name)


def reset_clients() -> None:
    """Forget cached clients (tests and the local stack call this after changing settings)."""
    client.cache_clear()
    dynamodb_table.cache_clear()
