"""Presigned S3 links are signed with Signature Version 4.

Every object of the service is SSE-KMS encrypted, and S3 serves or accepts such an object only on a
SigV4 request: a SigV2 link (``AWSAccessKeyId=…&Signature=…``) to a snapshot or an upload is refused
on AWS (Amazon S3 User Guide, "Specifying server-side encryption with AWS KMS"). The links come from
the data bucket's store as the functions build it (``shared.wiring``); presigning is local, so no AWS
call is made. Uploads are presigned POSTs, whose signed policy caps the size: a presigned PUT cannot.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlsplit

import pytest

from shared import wiring
from tests.unit.deployment import ENVIRONMENT, REGION

SIGV2_PARAMETERS = {"AWSAccessKeyId", "Signature", "Expires"}


@pytest.fixture
def deployed(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The functions' environment in AWS: no endpoint override, fake credentials."""
    for name, value in {
        **ENVIRONMENT,
        "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE",
        "AWS_SECRET_ACCESS_KEY": "x",
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    wiring.reset()
    yield
    wiring.reset()


def query_of(url: str) -> dict[str, str]:
    return {name: values[0] for name, values in parse_qs(urlsplit(url).query).items()}


def assert_sigv4(query: dict[str, str], expires_seconds: int) -> None:
    assert query["X-Amz-Algorithm"] == "AWS4-HMAC-SHA256"
    assert query["X-Amz-Credential"].startswith("AKIDEXAMPLE/")
    assert query["X-Amz-Credential"].endswith(f"/{REGION}/s3/aws4_request")
    assert query["X-Amz-Expires"] == str(expires_seconds)
    assert "host" in query["X-Amz-SignedHeaders"].split(";")
    assert len(query["X-Amz-Signature"]) == 64  # hex SHA-256 HMAC
    assert SIGV2_PARAMETERS.isdisjoint(query)


@pytest.mark.usefixtures("deployed")
def test_the_snapshot_download_link_is_signed_with_sigv4() -> None:
    # When
    url = wiring.data_blobs().download_url("snapshots/org-1/a.csv", "a.csv", expires_seconds=300)
    # Then
    assert_sigv4(query_of(url), expires_seconds=300)
    assert urlsplit(url).hostname == f"service-data.s3.{REGION}.amazonaws.com"  # the regional endpoint


@pytest.mark.usefixtures("deployed")
def test_the_upload_form_is_signed_with_sigv4_and_caps_the_size_in_its_policy() -> None:
    # When
    before = datetime.now(UTC)
    form = wiring.data_blobs().upload_form(
        "uploads/org-1/u.csv", "text/csv", max_bytes=1000, expires_seconds=900
    )
    # Then: a SigV4 POST policy, which S3 itself holds the upload to
    fields = form.fields
    assert fields["x-amz-algorithm"] == "AWS4-HMAC-SHA256"
    assert fields["x-amz-credential"].startswith("AKIDEXAMPLE/")
    assert fields["x-amz-credential"].endswith(f"/{REGION}/s3/aws4_request")
    assert len(fields["x-amz-signature"]) == 64
    assert {"AWSAccessKeyId", "signature"}.isdisjoint(fields)  # a SigV2 POST form's own fields
    policy = json.loads(base64.b64decode(fields["policy"]))
    expires = datetime.fromisoformat(policy["expiration"])
    assert timedelta(seconds=890) <= expires - before <= timedelta(seconds=910)
    conditions = policy["conditions"]
    # And: only this key, this content type, encrypted with the service's key, 1 to 1000 bytes
    assert {"key": "uploads/org-1/u.csv"} in conditions
    assert {"Content-Type": "text/csv"} in conditions
    assert {"x-amz-server-side-encryption": "aws:kms"} in conditions
    assert {"x-amz-server-side-encryption-aws-kms-key-id": ENVIRONMENT["KMS_KEY_ID"]} in conditions
    assert ["content-length-range", 1, 1000] in conditions
    assert form.url == f"https://service-data.s3.{REGION}.amazonaws.com/"
    # And: the form sends the values its policy names
    assert fields["key"] == "uploads/org-1/u.csv"
    assert fields["Content-Type"] == "text/csv"


@pytest.mark.usefixtures("deployed")
def test_a_link_to_a_custom_endpoint_names_the_bucket_in_its_path(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given: the local stack's moto server as the endpoint
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:5055")
    wiring.reset()
    # When
    url = wiring.data_blobs().download_url("snapshots/org-1/a.csv", "a.csv", expires_seconds=300)
    # Then
    assert url.startswith("http://127.0.0.1:5055/service-data/snapshots/org-1/a.csv?")
    assert_sigv4(query_of(url), expires_seconds=300)
