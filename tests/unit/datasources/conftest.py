"""A data source service on moto's DynamoDB, S3 and KMS, with a clock the test sets."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import boto3
import pytest
from moto import mock_aws

from shared.datasources.service import DataSourceService
from shared.repositories.blobs import S3BlobStore
from shared.repositories.datasources import DynamoDatasetStore

ORG = "shop-1"
NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


class Clock:
    """Starts at ``NOW`` and moves one second each time it is read, so syncs sort as they happened."""

    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


@dataclass
class DataSourceWorld:
    service: DataSourceService
    datasets: DynamoDatasetStore
    blobs: S3BlobStore
    started: list[tuple[str, dict[str, str]]] = field(default_factory=list)

    def start(self, name: str, payload: dict[str, str]) -> None:
        self.started.append((name, payload))

    def put_files(self, customers: bytes, products: bytes, orders: bytes, fmt: str = "csv") -> dict[str, str]:
        keys = {
            kind: f"data-sources/{ORG}/placed/{kind}.{fmt}" for kind in ("customers", "products", "orders")
        }
        for kind, data in zip(
            ("customers", "products", "orders"), (customers, products, orders), strict=True
        ):
            self.blobs.put(keys[kind], data)
        return keys


@pytest.fixture
def world(monkeypatch: pytest.MonkeyPatch) -> Iterator[DataSourceWorld]:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "test")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "test")
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    with mock_aws():
        dynamodb = boto3.resource("dynamodb", region_name="eu-west-1")
        table = dynamodb.create_table(
            TableName="main",
            KeySchema=[
                {"AttributeName": "pk", "KeyType": "HASH"},
                {"AttributeName": "sk", "KeyType": "RANGE"},
            ],
            AttributeDefinitions=[
                {"AttributeName": "pk", "AttributeType": "S"},
                {"AttributeName": "sk", "AttributeType": "S"},
            ],
            BillingMode="PAY_PER_REQUEST",
        )
        s3 = boto3.client("s3", region_name="eu-west-1")
        s3.create_bucket(Bucket="data", CreateBucketConfiguration={"LocationConstraint": "eu-west-1"})
        key_id = boto3.client("kms", region_name="eu-west-1").create_key()["KeyMetadata"]["KeyId"]
        datasets = DynamoDatasetStore(table, boto3.client("dynamodb", region_name="eu-west-1"))
        blobs = S3BlobStore(s3, "data", key_id)
        service = DataSourceService(datasets=datasets, blobs=blobs, clock=Clock(), max_file_bytes=10_000_000)
        yield DataSourceWorld(service=service, datasets=datasets, blobs=blobs)
