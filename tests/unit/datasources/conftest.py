"""A data source service on moto's DynamoDB, S3 and KMS, with a clock the test sets."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import boto3
import pytest

from shared.datasources.service import MODEL_NAMES, DataSourceService
from shared.records.datasources import ModelTraining
from shared.repositories.blobs import S3BlobStore
from shared.repositories.datasources import DynamoDatasetStore
from tests.unit.moto_aws import REGION, encrypted_bucket, offline_aws, table

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
class Refunds:
    """What the provider has refunded of the hosted checkout's orders (order id -> amount, cumulative),
    as the payments store keeps it for the sync."""

    refunded: dict[str, int] = field(default_factory=dict)

    def refunded_orders(self, org_id: str) -> dict[str, int]:
        return dict(self.refunded) if org_id == ORG else {}


@dataclass
class DataSourceWorld:
    service: DataSourceService
    datasets: DynamoDatasetStore
    blobs: S3BlobStore
    refunds: Refunds = field(default_factory=Refunds)
    started: list[tuple[str, dict[str, str]]] = field(default_factory=list)

    def start(self, name: str, payload: dict[str, str]) -> None:
        self.started.append((name, payload))

    def train_purchase(self, version: str) -> None:
        """Record the version's purchase model trained, as the training job does: that puts it in force."""
        trained = ModelTraining(
            model_name=MODEL_NAMES["purchase"], state="succeeded", model_version="m1", updated_at=NOW
        )
        self.datasets.record_training(ORG, version, "purchase", trained, publish=True)

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
    with offline_aws(monkeypatch):
        s3, key_id = encrypted_bucket("data")
        datasets = DynamoDatasetStore(table("main"), boto3.client("dynamodb", region_name=REGION))
        blobs = S3BlobStore(s3, "data", key_id)
        refunds = Refunds()
        service = DataSourceService(
            datasets=datasets, blobs=blobs, refunds=refunds, clock=Clock(), max_file_bytes=10_000_000
        )
        yield DataSourceWorld(service=service, datasets=datasets, blobs=blobs, refunds=refunds)
