"""Objects in S3: snapshots and uploaded data, always SSE-KMS with the service's key."""

from __future__ import annotations

import io
import shutil
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, cast

from shared import deadline
from shared.records.uploads import UploadForm

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client
    from mypy_boto3_s3.type_defs import CompletedPartTypeDef


# Multipart upload part size (S3 takes 5 MB to 5 GB per part and at most 10,000 parts: 16 MB parts
# carry a file of up to 156 GB), and the read size of a download.
PART_BYTES = 16 * 1024 * 1024
# Requests in flight at once when many small objects are read or deleted (``fetch_into``,
# ``download_all``, ``delete_all``): S3 answers each in tens of milliseconds, so one at a time, a
# sync's 50,000 order objects would take most of its 15 minutes; 32 at a time, well under two.
# The S3 clients keep as many connections open (``shared.aws.S3_CONNECTIONS``).
CONCURRENT_REQUESTS = 32


class S3BlobStore:
    """One bucket. Objects are encrypted with the service's KMS key whatever the bucket default."""

    def __init__(self, s3: S3Client, bucket: str, kms_key_id: str) -> None:
        self._s3 = s3
        self._bucket = bucket
        self._kms_key_id = kms_key_id

    def put(self, key: str, data: bytes, content_type: str = "application/octet-stream") -> None:
        self._s3.put_object(
            Bucket=self._bucket,
            Key=key,
            Body=data,
            ContentType=content_type,
            ServerSideEncryption="aws:kms",
            SSEKMSKeyId=self._kms_key_id,
        )

    def get(self, key: str) -> bytes:
        body: bytes = self._s3.get_object(Bucket=self._bucket, Key=key)["Body"].read()
        return body

    def get_range(self, key: str, start: int, end: int) -> bytes:
        """Bytes ``start`` to ``end`` (inclusive) of the object: one ranged GET."""
        body: bytes = self._s3.get_object(Bucket=self._bucket, Key=key, Range=f"bytes={start}-{end}")[
            "Body"
        ].read()
        return body

    def download(self, key: str, path: Path) -> None:
        """The object into a local file, streamed (a file larger than the memory is fine)."""
        body = self._s3.get_object(Bucket=self._bucket, Key=key)["Body"]
        with path.open("wb") as file:
            shutil.copyfileobj(body, file, 8 << 20)

    def upload(self, key: str, path: Path, content_type: str = "application/octet-stream") -> None:
        """A local file as the object, SSE-KMS with the service's key: one PUT when small, else a
        multipart upload of ``PART_BYTES`` parts read one at a time (the clients are botocore's, which
        have no managed transfer). A failed multipart upload is aborted, leaving no parts behind."""
        size = path.stat().st_size
        if size <= PART_BYTES:
            with path.open("rb") as file:
                self._s3.put_object(
                    Bucket=self._bucket,
                    Key=key,
                    Body=file,
                    ContentType=content_type,
                    ServerSideEncryption="aws:kms",
                    SSEKMSKeyId=self._kms_key_id,
                )
            return
        upload_id = self.start_parts(key, content_type)
        try:
            parts: list[CompletedPartTypeDef] = []
            with path.open("rb") as file:
                number = 1
                while chunk := file.read(PART_BYTES):
                    sent = self._s3.upload_part(
                        Bucket=self._bucket, Key=key, UploadId=upload_id, PartNumber=number, Body=chunk
                    )
                    parts.append({"ETag": sent["ETag"], "PartNumber": number})
                    number += 1
            self._s3.complete_multipart_upload(
                Bucket=self._bucket, Key=key, UploadId=upload_id, MultipartUpload={"Parts": parts}
            )
        except BaseException:
            self._s3.abort_multipart_upload(Bucket=self._bucket, Key=key, UploadId=upload_id)
            raise

    def start_parts(self, key: str, content_type: str = "application/octet-stream") -> str:
        """Begin an object written in parts by several invocations (``put_part``, ``finish_parts``),
        SSE-KMS with the service's key; the upload's id, for them. An upload never finished is
        removed by the bucket's lifecycle rule for incomplete multipart uploads."""
        upload: str = self._s3.create_multipart_upload(
            Bucket=self._bucket,
            Key=key,
            ContentType=content_type,
            ServerSideEncryption="aws:kms",
            SSEKMSKeyId=self._kms_key_id,
        )["UploadId"]
        return upload

    def put_part(self, key: str, upload: str, number: int, path: Path) -> str:
        """A local file as part ``number`` (from 1; at least 5 MiB unless it is the last) of the upload;
        its ETag. Sending a number again replaces that part."""
        with path.open("rb") as file:
            sent = self._s3.upload_part(
                Bucket=self._bucket, Key=key, UploadId=upload, PartNumber=number, Body=file
            )
        return str(sent["ETag"])

    def finish_parts(self, key: str, upload: str, etags: Sequence[str]) -> None:
        """The object made of the upload's parts 1.. (``etags`` in order)."""
        parts: list[CompletedPartTypeDef] = [
            {"ETag": etag, "PartNumber": number} for number, etag in enumerate(etags, start=1)
        ]
        self._s3.complete_multipart_upload(
            Bucket=self._bucket, Key=key, UploadId=upload, MultipartUpload={"Parts": parts}
        )

    def open(self, key: str) -> BinaryIO:
        """The object's bytes as a stream read from S3 as it is consumed (never whole in memory)."""
        body = self._s3.get_object(Bucket=self._bucket, Key=key)["Body"]
        return cast("BinaryIO", io.BufferedReader(_ObjectStream(body), buffer_size=64 * 1024))

    def exists(self, key: str) -> bool:
        try:
            self._s3.head_object(Bucket=self._bucket, Key=key)
        except self._s3.exceptions.ClientError as exc:
            if exc.response["Error"]["Code"] in {"404", "NoSuchKey", "NotFound"}:
                return False
            raise
        return True

    def size(self, key: str) -> int | None:
        """The object's size in bytes, or None when there is no such object."""
        try:
            head = self._s3.head_object(Bucket=self._bucket, Key=key)
        except self._s3.exceptions.ClientError as exc:
            if exc.response["Error"]["Code"] in {"404", "NoSuchKey", "NotFound"}:
                return None
            raise
        return int(head["ContentLength"])

    def delete(self, key: str) -> None:
        self._s3.delete_object(Bucket=self._bucket, Key=key)

    def fetch_into(self, keys: Sequence[str], path: Path, separator: bytes = b"\n") -> None:
        """The objects ``keys`` (small ones: each is held whole while it is written) one after another
        into the local file ``path``, in ``keys``' order, each followed by ``separator``; read
        ``CONCURRENT_REQUESTS`` at a time."""
        with path.open("wb") as file:
            for body in _concurrently(self._read, keys):
                file.write(body)
                file.write(separator)

    def download_all(self, targets: Sequence[tuple[str, Path]]) -> None:
        """Each ``(key, path)`` of ``targets``: the object into its local file (``download``),
        ``CONCURRENT_REQUESTS`` at a time."""
        for _ in _concurrently(lambda target: self.download(*target), targets):
            pass

    def delete_all(self, keys: Sequence[str]) -> None:
        """Delete the objects ``keys``, ``CONCURRENT_REQUESTS`` at a time (one request each: IAM
        authorizes a multi-object delete as ``s3:DeleteObject`` per key, which moto's does not)."""
        for _ in _concurrently(self.delete, keys):
            pass

    def _read(self, key: str) -> bytes:
        body: bytes = self._s3.get_object(Bucket=self._bucket, Key=key)["Body"].read()
        return body

    def keys(self, prefix: str) -> list[str]:
        """The keys of the objects under ``prefix``, in key order (a page of 1,000 per call)."""
        pages = self._s3.get_paginator("list_objects_v2").paginate(Bucket=self._bucket, Prefix=prefix)
        return [item["Key"] for page in pages for item in page.get("Contents", [])]

    def download_url(self, key: str, filename: str, expires_seconds: int) -> str:
        """A presigned GET URL that downloads the object as ``filename``."""
        url: str = self._s3.generate_presigned_url(
            "get_object",
            Params={
                "Bucket": self._bucket,
                "Key": key,
                "ResponseContentDisposition": f'attachment; filename="{filename}"',
                "ResponseContentType": "text/csv",
            },
            ExpiresIn=expires_seconds,
        )
        return url

    def upload_form(self, key: str, content_type: str, max_bytes: int, expires_seconds: int) -> UploadForm:
        """A presigned POST for ``key`` that S3 itself holds to its policy: this key, this content
        type, the service's KMS key, and between 1 and ``max_bytes`` bytes (``content-length-range``;
        a presigned PUT cannot limit the size). The readers check the size again before reading, as
        moto, the local S3, does not enforce the range."""
        encryption = {
            "Content-Type": content_type,
            "x-amz-server-side-encryption": "aws:kms",
            "x-amz-server-side-encryption-aws-kms-key-id": self._kms_key_id,
        }
        post = self._s3.generate_presigned_post(
            Bucket=self._bucket,
            Key=key,
            Fields=encryption,
            Conditions=[
                *({name: value} for name, value in encryption.items()),
                ["content-length-range", 1, max_bytes],
            ],
            ExpiresIn=expires_seconds,
        )
        return UploadForm(
            url=post["url"], fields={name: str(value) for name, value in post["fields"].items()}
        )


class _ObjectStream(io.RawIOBase):
    """An S3 response body as a raw stream. botocore's body reports itself closed once urllib3 has
    read it to the end (it releases the connection), so a text reader over it raises "I/O operation
    on closed file" at the end instead of seeing the end; this stream ends normally."""

    def __init__(self, body: Any) -> None:
        self._body = body

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data: bytes = self._body.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self._body.close()
        super().close()


def _concurrently[T, R](call: Callable[[T], R], items: Sequence[T]) -> Iterable[R]:
    """``call`` of each item, ``CONCURRENT_REQUESTS`` at a time, the results in the items' order; the
    first failure raises (the calls not yet started are cancelled). Each call carries the invocation's
    budget (``shared.deadline``), so it is bounded as it would be on the caller's thread."""
    if len(items) <= 1:
        yield from (call(item) for item in items)
        return
    with ThreadPoolExecutor(max_workers=CONCURRENT_REQUESTS, thread_name_prefix="s3") as pool:
        futures = [pool.submit(deadline.carry(call), item) for item in items]
        try:
            for future in futures:
                yield future.result()
        finally:
            for future in futures:
                future.cancel()
