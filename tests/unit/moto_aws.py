"""moto-backed AWS for unit tests: the service's tables as ``template.yaml`` declares them (keys,
attributes and indexes), and an S3 bucket with a KMS key, so each test builds the real shapes
instead of writing its own copy of them."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import boto3
import pytest
from moto import mock_aws

from local.template import load_template

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.service_resource import Table
    from mypy_boto3_s3 import S3Client

REGION = "eu-west-1"


@contextmanager
def offline_aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """moto in this process, with fake credentials and no endpoint (a local stack's AWS_ENDPOINT_URL
    would send boto3 past moto's in-process mock)."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "test")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "test")
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    with mock_aws():
        yield


def table(name: str = "main", logical_id: str = "MainTable") -> Table:
    """A table named ``name`` with the key schema, attributes and indexes of ``logical_id`` in
    template.yaml (``MainTable``: pk/sk and the gsi1 index; ``UsageTable``: pk/sk)."""
    properties = load_template()["Resources"][logical_id]["Properties"]
    shape: dict[str, Any] = {
        "KeySchema": properties["KeySchema"],
        "AttributeDefinitions": properties["AttributeDefinitions"],
    }
    if "GlobalSecondaryIndexes" in properties:
        shape["GlobalSecondaryIndexes"] = properties["GlobalSecondaryIndexes"]
    dynamodb = boto3.resource("dynamodb", region_name=REGION)
    return dynamodb.create_table(TableName=name, BillingMode="PAY_PER_REQUEST", **shape)


def encrypted_bucket(name: str = "data") -> tuple[S3Client, str]:
    """An S3 client with the bucket ``name`` made, and the id of a new KMS key for its objects
    (what ``shared.repositories.blobs.S3BlobStore`` takes)."""
    s3 = boto3.client("s3", region_name=REGION)
    s3.create_bucket(Bucket=name, CreateBucketConfiguration={"LocationConstraint": REGION})
    key_id = boto3.client("kms", region_name=REGION).create_key()["KeyMetadata"]["KeyId"]
    return s3, key_id
