"""Large files to and from S3 without holding them in memory: a file past one part goes up as a
multipart upload (SSE-KMS like every object), and comes back whole. Many small objects (the hosted
checkout's orders) are read into one file and deleted many requests at once."""

from __future__ import annotations

import io
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

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


def test_many_small_objects_are_fetched_into_one_file_in_order_and_deleted(
    store: S3BlobStore, tmp_path: Path
) -> None:
    # Given 100 small objects (more than are fetched at once)
    keys = [f"checkout-orders/org/cs_{n:03d}.json" for n in range(100)]
    for n, key in enumerate(keys):
        store.put(key, f'{{"n": {n}}}'.encode())

    # When they are fetched into one file, a part downloaded beside it, then all deleted
    joined = tmp_path / "orders.json"
    store.fetch_into(keys, joined)
    store.download_all([(keys[7], tmp_path / "seven.json"), (keys[8], tmp_path / "eight.json")])
    store.delete_all(keys)

    # Then the file holds each object once, in the keys' order, one a line; and none is left
    assert joined.read_bytes() == b"".join(f'{{"n": {n}}}\n'.encode() for n in range(100))
    assert (tmp_path / "eight.json").read_bytes() == b'{"n": 8}'
    assert store.keys("checkout-orders/") == []


class _MeetingClient:
    """An S3 client whose reads and deletes each wait for three others to be in flight: one sent at
    a time would never meet (the barrier breaks after its timeout)."""

    def __init__(self) -> None:
        self.meeting = threading.Barrier(4, timeout=60)
        self.deleted: list[str] = []

    def get_object(self, Bucket: str, Key: str) -> dict[str, Any]:  # noqa: N803 - boto3's names
        self.meeting.wait()
        return {"Body": io.BytesIO(Key.encode())}

    def delete_object(self, Bucket: str, Key: str) -> None:  # noqa: N803 - boto3's names
        self.meeting.wait()
        self.deleted.append(Key)


def test_many_small_objects_are_read_and_deleted_several_at_once(tmp_path: Path) -> None:
    # Given a bucket that answers only requests sent four at a time
    client = _MeetingClient()
    store = S3BlobStore(cast("Any", client), "data", "key")
    keys = [f"k{n}" for n in range(8)]
    # When eight objects are read and deleted
    store.fetch_into(keys, tmp_path / "joined")
    store.delete_all(keys)
    # Then every request was answered (none waited alone), and the file is in the keys' order
    assert (tmp_path / "joined").read_bytes() == b"".join(key.encode() + b"\n" for key in keys)
    assert sorted(client.deleted) == sorted(keys)


def test_the_s3_clients_keep_a_connection_for_each_request_sent_at_once() -> None:
    # botocore keeps 10 by default: more requests at once would wait for a connection
    from shared.aws import _S3_CONFIG, _S3_CUSTOM_ENDPOINT_CONFIG

    assert _S3_CONFIG.max_pool_connections == blob_module.CONCURRENT_REQUESTS
    assert _S3_CUSTOM_ENDPOINT_CONFIG.max_pool_connections == blob_module.CONCURRENT_REQUESTS
