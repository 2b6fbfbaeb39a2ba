"""Uploaded audience lists are read as a stream, never whole in memory, and only under the size cap;
accepting one reads only its start (its rows are checked by the activation's SelectUsers step).

The list comes from S3 (moto here) through the data bucket's store, as the functions read it; the
stream is watched, so the test sees how much was asked for at once.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import BinaryIO

import boto3
import pytest
from moto import mock_aws

from shared.audiences.uploads import check_upload, upload_key
from shared.errors import NotFound, ValidationFailed
from shared.repositories.blobs import S3BlobStore
from tests.hostile_files import WORKBOOK, gzip_bomb

ORG = "org-1"
UPLOAD = "0b6f1c9e-2a43-4a7e-9d1f-5e0c2b7a8d34"
REGION = "eu-west-1"


class WatchedBlobs(S3BlobStore):
    """The service's S3 store, noting the largest read made on an opened object; reading an object
    whole (``get``) is refused."""

    largest_read = 0
    total_read = 0

    def get(self, key: str) -> bytes:
        raise AssertionError(f"{key} was read whole")

    def open(self, key: str) -> BinaryIO:
        stream = super().open(key)
        watched = self

        class Watched(io.RawIOBase):
            def readable(self) -> bool:
                return True

            def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
                watched.largest_read = max(watched.largest_read, len(buffer))
                data = stream.read(len(buffer))
                watched.total_read += len(data)
                buffer[: len(data)] = data
                return len(data)

        return io.BufferedReader(Watched())  # type: ignore[return-value]


@pytest.fixture
def blobs(monkeypatch: pytest.MonkeyPatch) -> Iterator[WatchedBlobs]:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "test")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "test")
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    with mock_aws():
        s3 = boto3.client("s3", region_name=REGION)
        s3.create_bucket(Bucket="data", CreateBucketConfiguration={"LocationConstraint": REGION})
        key_id = boto3.client("kms", region_name=REGION).create_key()["KeyMetadata"]["KeyId"]
        yield WatchedBlobs(s3, "data", key_id)


def users_csv(count: int) -> bytes:
    rows = [f"u{i},buyer{i}@example.com,Zoë,O'Brien,07700 9{i % 100_000:05d},0.8,GB" for i in range(count)]
    return ("\ufeffuser_id,email,firstName,lastName,phone,score,country\n" + "\n".join(rows)).encode()


def test_accepting_a_large_list_reads_only_its_start(blobs: WatchedBlobs) -> None:
    # Given: a 5 MB list (60,000 users) uploaded as UTF-8 with a byte-order mark
    data = users_csv(60_000)
    blobs.put(upload_key(ORG, UPLOAD), data, "text/csv")
    # When
    check_upload(ORG, UPLOAD, blobs, max_bytes=len(data))
    # Then: its header and first row were read, in pieces of at most 64 KiB, not the whole list
    assert 0 < blobs.largest_read <= 64 * 1024
    assert blobs.total_read <= 2 * 64 * 1024 < len(data)


def test_a_header_without_user_id_is_refused_naming_the_upload(blobs: WatchedBlobs) -> None:
    blobs.put(upload_key(ORG, UPLOAD), b"id,email\nu1,one@example.com\n", "text/csv")
    with pytest.raises(ValidationFailed) as refused:
        check_upload(ORG, UPLOAD, blobs, max_bytes=1_000)
    assert refused.value.field == "uploadId"
    assert "the header row must include a user_id column" in refused.value.message


def test_a_list_with_a_header_and_no_rows_is_refused(blobs: WatchedBlobs) -> None:
    blobs.put(upload_key(ORG, UPLOAD), b"user_id,email\n\n\n", "text/csv")
    with pytest.raises(ValidationFailed, match="has no users"):
        check_upload(ORG, UPLOAD, blobs, max_bytes=1_000)


def test_a_list_over_the_cap_is_refused_before_it_is_read(blobs: WatchedBlobs) -> None:
    # Given
    data = users_csv(100)
    blobs.put(upload_key(ORG, UPLOAD), data, "text/csv")
    # When
    with pytest.raises(ValidationFailed) as refused:
        check_upload(ORG, UPLOAD, blobs, max_bytes=len(data) - 1)
    # Then
    assert refused.value.field == "uploadId"
    assert f"{len(data):,} bytes; the limit is {len(data) - 1:,}" in refused.value.message
    assert blobs.largest_read == 0


def test_a_file_that_is_not_utf8_is_refused_naming_the_upload(blobs: WatchedBlobs) -> None:
    blobs.put(upload_key(ORG, UPLOAD), b"user_id,email\nu1,caf\xe9@example.com\n", "text/csv")
    with pytest.raises(ValidationFailed) as refused:
        check_upload(ORG, UPLOAD, blobs, max_bytes=1_000)
    assert (refused.value.field, refused.value.message) == (
        "uploadId",
        "The uploaded file is not UTF-8 text.",
    )


@pytest.mark.parametrize(
    ("data", "what"),
    [
        (gzip_bomb(256), "a compressed file (gz)"),
        (WORKBOOK, "an Excel workbook (.xlsx)"),
        ("user_id,email\nu1,a@example.com\n".encode("utf-16"), "UTF-16 text"),
        (bytes(200_000), "binary data (it holds NUL bytes)"),
    ],
    ids=["a gzip bomb (256 MiB of zeros)", "an Excel workbook", "UTF-16", "zeros"],
)
def test_a_file_that_is_not_text_is_refused_saying_what_it_is_from_its_start(
    blobs: WatchedBlobs, data: bytes, what: str
) -> None:
    # Given: a compressed file, a workbook or binary data where a CSV list of users was expected
    blobs.put(upload_key(ORG, UPLOAD), data, "text/csv")
    # When
    with pytest.raises(ValidationFailed) as refused:
        check_upload(ORG, UPLOAD, blobs, max_bytes=len(data))
    # Then: refused saying what the file is and what to upload instead, from its first bytes (the
    # bomb is never decompressed: its 256 MiB of zeros are not read, only its start)
    assert refused.value.field == "uploadId"
    assert refused.value.message == (
        f"The uploaded file (upload {UPLOAD}) is {what}: "
        "an audience is made from a UTF-8 CSV list of users only."
    )
    assert "user_id,email,firstName" in (refused.value.remedy or "")
    assert blobs.total_read <= 3 * 64 * 1024


def test_a_missing_upload_is_not_found(blobs: WatchedBlobs) -> None:
    with pytest.raises(NotFound):
        check_upload(ORG, UPLOAD, blobs, max_bytes=1_000)


def test_a_file_of_one_enormous_line_is_refused_naming_the_upload_and_the_limit(blobs: WatchedBlobs) -> None:
    # Given: 8 MB with no line end (a header of four million columns)
    data = b"user_id,email," + b"a," * 4_000_000
    blobs.put(upload_key(ORG, UPLOAD), data, "text/csv")
    # When
    with pytest.raises(ValidationFailed) as refused:
        check_upload(ORG, UPLOAD, blobs, max_bytes=len(data))
    # Then: refused after reading about the limit, never the whole line
    assert refused.value.field == "uploadId"
    assert f"The uploaded CSV (upload {UPLOAD}) has a line longer than 65,536 characters (line 1)" in (
        refused.value.message
    )
    assert blobs.total_read <= 4 * 64 * 1024 < len(data)


def test_a_row_longer_than_the_limit_is_refused_naming_its_line(blobs: WatchedBlobs) -> None:
    data = b"user_id,email\n" + b"u1," + b"x" * 200_000 + b"\n"
    blobs.put(upload_key(ORG, UPLOAD), data, "text/csv")
    with pytest.raises(ValidationFailed, match=r"longer than 65,536 characters \(line 2\)"):
        check_upload(ORG, UPLOAD, blobs, max_bytes=len(data))
