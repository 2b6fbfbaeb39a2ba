"""Large files to and from S3 without holding them in memory: a file past one part goes up as a
multipart upload (SSE-KMS like every object), and comes back whole."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from shared.repositories import blobs as blob_module
from shared.repositories.blobs import S3BlobStore
from tests.unit.moto_aws import encrypted_bucket, offline_aws


@pytest.fixture
def store(monkeypatch: pytest.MonkeyPatch) -> Iterator[S3BlobStore]:
    with offline_aws(monkeypatch):
        s3, key_id = encrypted_bucket("data")
        yield S3BlobStore(s3, "data", key_id)


def test_a_file_larger_than_a_part_goes_up_in_parts_and_comes_back_whole(
    store: S3BlobStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a file of 11 MB and parts of 5 MB (S3's smallest)
    monkeypatch.setattr(blob_module, "PART_BYTES", 5 * 1024 * 1024)
    data = os.urandom(11 * 1024 * 1024)
    source = tmp_path / "snapshot.csv"
    source.write_bytes(data)

    # When it is uploaded and downloaded again
    store.upload("snapshots/org/a.csv", source, "text/csv")
    back = tmp_path / "back.csv"
    store.download("snapshots/org/a.csv", back)

    # Then it went up in three parts, encrypted with the service's key, and came back byte for byte
    head = store._s3.head_object(Bucket="data", Key="snapshots/org/a.csv", PartNumber=1)
    assert head["PartsCount"] == 3
    assert head["ServerSideEncryption"] == "aws:kms"
    assert back.read_bytes() == data


def test_a_small_file_goes_up_in_one_put(store: S3BlobStore, tmp_path: Path) -> None:
    source = tmp_path / "small.csv"
    source.write_bytes(b"user_id\r\nu1\r\n")
    store.upload("snapshots/org/b.csv", source, "text/csv")
    assert store.get("snapshots/org/b.csv") == b"user_id\r\nu1\r\n"
    assert store._s3.head_object(Bucket="data", Key="snapshots/org/b.csv")["ContentType"] == "text/csv"
