"""Presigned S3 links are signed with Signature Version 4.

Every object of the service is SSE-KMS encrypted, and S3 serves or accepts such an object only on a
SigV4 request: a SigV2 link (``AWSAccessKeyId=…&Signature=…``) to a snapshot or an upload is refused
on AWS (Amazon S3 User Guide, "Specifying server-side encryption with AWS KMS"). The links come from
the data bucket's store as the functions build it (``shared.wiring``); presigning is local, so no AWS
call is made.
"""

from __future__ import annotations

from collections.abc import Iterator
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
def test_the_upload_link_is_signed_with_sigv4() -> None:
    # When
    url = wiring.data_blobs().upload_url("uploads/org-1/u.csv", "text/csv", expires_seconds=900)
    # Then
    query = query_of(url)
    assert_sigv4(query, expires_seconds=900)
    assert "content-type" in query["X-Amz-SignedHeaders"].split(";")


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
