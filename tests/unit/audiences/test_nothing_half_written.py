"""Nothing half-written: an audience creation that fails after it started writing leaves nothing behind.

Before the record is stored, creation claims the Idempotency-Key (bound to the request's hash) and
writes the request with its users (``sources/``, raw e-mails). If a later step fails, that object
would sit in S3 with no record pointing at it, and the key would stay bound, refusing the corrected
request as a reused key. Here the stores are the service's own, on moto's DynamoDB, S3 and KMS; the
failures are the ones AWS answers with (throttling), and afterwards the bucket and the table are
scanned whole.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from botocore.exceptions import ClientError

from shared.audiences.identifiers import AudienceUser
from shared.audiences.models import CreateAudienceRequest
from shared.audiences.service import AudienceService
from shared.errors import ValidationFailed
from shared.records.audiences import AudienceRecord
from shared.repositories.audiences import DynamoAudienceStore
from shared.repositories.blobs import S3BlobStore
from tests.unit.audiences.test_audience_service import SandboxConnections, Ticking
from tests.unit.moto_aws import encrypted_bucket, offline_aws, table
from tests.unit.sandbox_platform import SandboxPlatform

ORG = "org-1"
KEY = "create-0001"


def throttled(operation: str) -> ClientError:
    """The error botocore raises when AWS still throttles after its retries."""
    code = "SlowDown" if operation == "PutObject" else "ProvisionedThroughputExceededException"
    return ClientError({"Error": {"Code": code, "Message": "Rate exceeded"}}, operation)


class RecordWriteRefused(DynamoAudienceStore):
    """DynamoDB refuses to store the new audience record (``lost_answer``: stores it, then the answer
    is lost, as when a connection drops after the write)."""

    lost_answer = False

    def create(self, record: AudienceRecord) -> bool:
        if self.lost_answer:
            super().create(record)
        raise throttled("PutItem")


class SourceWriteRefused(S3BlobStore):
    """S3 refuses to store the request's users."""

    def put(self, key: str, data: bytes, content_type: str = "application/octet-stream") -> None:
        if key.startswith("sources/"):
            raise throttled("PutObject")
        super().put(key, data, content_type)


@dataclass
class World:
    table: Any
    s3: Any
    key_id: str
    platform: SandboxPlatform

    def service(
        self, audiences: DynamoAudienceStore | None = None, blobs: S3BlobStore | None = None
    ) -> AudienceService:
        return AudienceService(
            audiences=audiences or DynamoAudienceStore(self.table),
            blobs=blobs or S3BlobStore(self.s3, "data", self.key_id),
            connections=SandboxConnections(self.platform),
            clock=Ticking(),
        )

    def objects(self) -> list[str]:
        listed = self.s3.list_objects_v2(Bucket="data")
        return sorted(item["Key"] for item in listed.get("Contents", []))

    def items(self) -> list[str]:
        return sorted(f"{item['pk']} {item['sk']}" for item in self.table.scan()["Items"])


@pytest.fixture
def world(monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    with offline_aws(monkeypatch):
        s3, key_id = encrypted_bucket("data")
        yield World(table=table("main"), s3=s3, key_id=key_id, platform=SandboxPlatform())


def request(**fields: Any) -> CreateAudienceRequest:
    users = [AudienceUser(user_id=f"u{i}", email=f"buyer{i}@example.com") for i in range(5)]
    return CreateAudienceRequest(name="Likely buyers", users=users, **fields)


def test_a_refused_record_write_leaves_no_users_or_claimed_key(world: World) -> None:
    # Given: DynamoDB refuses the audience record, after the users were written
    service = world.service(audiences=RecordWriteRefused(world.table))
    # When
    with pytest.raises(ClientError):
        service.create(ORG, request(), idempotency_key=KEY)
    # Then: the bucket and the table are empty
    assert world.objects() == []
    assert world.items() == []


def test_the_same_key_then_creates_the_audience(world: World) -> None:
    # Given: a creation that failed on its record write
    with pytest.raises(ClientError):
        world.service(audiences=RecordWriteRefused(world.table)).create(ORG, request(), idempotency_key=KEY)
    # When: the request is repeated with its key once DynamoDB takes writes again
    created = world.service().create(ORG, request(), idempotency_key=KEY)
    # Then: one audience with its record, its key, its users and its snapshot
    assert created.status == "active"
    assert f"sources/{ORG}/{created.audience_id}.json" in world.objects()
    assert f"snapshots/{ORG}/{created.audience_id}.csv" in world.objects()
    assert world.items() == [f"ORG#{ORG} AUDIENCE#{created.audience_id}", f"ORG#{ORG} AUDIENCEKEY#{KEY}"]


def test_a_refused_users_write_releases_the_key(world: World) -> None:
    # Given: S3 refuses the users' source object, after the key was claimed
    service = world.service(blobs=SourceWriteRefused(world.s3, "data", world.key_id))
    # When
    with pytest.raises(ClientError):
        service.create(ORG, request(), idempotency_key=KEY)
    # Then
    assert world.objects() == []
    assert world.items() == []


def test_a_request_refused_after_its_key_was_claimed_releases_the_key(world: World) -> None:
    # Given: nobody in the list can be matched (refused once the key is claimed)
    users = [AudienceUser(user_id="u1", email="not-an-address")]
    # When
    with pytest.raises(ValidationFailed):
        world.service().create(ORG, CreateAudienceRequest(name="Nobody", users=users), idempotency_key=KEY)
    # Then
    assert world.items() == []
    assert world.objects() == []
    # And the corrected request (another body) may use the key
    assert world.service().create(ORG, request(), idempotency_key=KEY).status == "active"


def test_a_record_written_whose_answer_was_lost_is_kept_and_resumed(world: World) -> None:
    # Given: the record was stored, but its write answered with an error
    store = RecordWriteRefused(world.table)
    store.lost_answer = True
    with pytest.raises(ClientError):
        world.service(audiences=store).create(ORG, request(), idempotency_key=KEY)
    # Then: the audience exists, so nothing of it was removed
    (audience_item,) = [item for item in world.items() if " AUDIENCE#" in item]
    audience_id = audience_item.rsplit("#", 1)[1]
    assert world.objects() == [f"sources/{ORG}/{audience_id}.json"]
    # And when the request is repeated with its key, that audience is finished
    created = world.service().create(ORG, request(), idempotency_key=KEY)
    assert (created.audience_id, created.status) == (audience_id, "active")
