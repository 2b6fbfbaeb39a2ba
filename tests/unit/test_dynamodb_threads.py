"""A DynamoDB resource shared by threads builds each call's expressions on its own.

boto3 gives a resource one condition builder, whose placeholder counters every call resets; two
threads building at once renumber each other's placeholders and DynamoDB refuses the query
(boto/boto3#1332). The local stack runs concurrent invocations in one process and hit it: "Query
condition missed key schema element: pk" on the audiences list during an activation.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator

import pytest
from boto3.dynamodb.conditions import Attr, Key

from shared import aws
from shared.settings import Settings
from tests.unit.moto_aws import REGION, offline_aws, table

THREADS = 8
CALLS = 150


@pytest.fixture
def switching_often() -> Iterator[None]:
    """Threads switch every microsecond instead of every 5 ms, so a race shows within a second."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(before)


def test_concurrent_queries_through_one_resource_all_succeed(
    monkeypatch: pytest.MonkeyPatch, switching_often: None
) -> None:
    with offline_aws(monkeypatch):
        # Given: one table object from the service's resource, with an audience in it
        table("main")
        shared_table = aws.dynamodb_resource(
            Settings.model_construct(aws_region=REGION, aws_endpoint_url=None)
        ).Table("main")
        shared_table.put_item(Item={"pk": "ORG#1", "sk": "AUDIENCE#a", "status": "active"})
        failures: list[Exception] = []

        def list_audiences() -> None:
            for _ in range(CALLS):
                try:
                    found = shared_table.query(
                        KeyConditionExpression=Key("pk").eq("ORG#1") & Key("sk").begins_with("AUDIENCE#"),
                        FilterExpression=Attr("status").eq("active"),
                    )["Items"]
                    assert len(found) == 1
                except Exception as exc:  # every failure is collected and shown
                    failures.append(exc)

        # When: eight threads list the audiences at once
        threads = [threading.Thread(target=list_audiences) for _ in range(THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

        # Then: every one of the 1,200 queries went out as written
        assert failures == []
