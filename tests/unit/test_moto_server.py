"""The local stack's moto server frees what it replaces, as AWS forgets it.

moto keeps every model object it builds in its class's ``instances_tracked``: every item ever written,
every item a Query or Scan copied out, and each whole-table copy ``TransactWriteItems`` takes before
writing. The integration suite's process grew to 20 GB that way; ``local.moto_server`` stops it.
"""

from __future__ import annotations

import gc
import uuid
from collections.abc import Iterator
from typing import TYPE_CHECKING

import boto3
import pytest
from moto.dynamodb.models.dynamo_type import Item

from local.moto_server import MotoServer
from local.stack import free_port
from tests.unit.moto_aws import REGION

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient


@pytest.fixture
def dynamodb() -> Iterator[DynamoDBClient]:
    """A client on a local-stack moto server, with a table shaped as MainTable's keys."""
    port = free_port()
    server = MotoServer("127.0.0.1", port)
    server.start()
    client = boto3.client(
        "dynamodb",
        endpoint_url=f"http://127.0.0.1:{port}",
        region_name=REGION,
        aws_access_key_id="local",
        aws_secret_access_key="local",
    )
    client.create_table(
        TableName="main",
        BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "S"},
        ],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
    )
    try:
        yield client
    finally:
        client.delete_table(TableName="main")
        server.stop()


def items_alive(marker: str) -> int:
    """moto's DynamoDB items still in memory whose key starts with ``marker``."""
    gc.collect()
    return sum(
        1
        for obj in gc.get_objects()
        if isinstance(obj, Item) and obj.hash_key is not None and str(obj.hash_key.value).startswith(marker)
    )


def test_moto_keeps_only_the_items_its_tables_hold(dynamodb: DynamoDBClient) -> None:
    # Given: ten items in a table
    marker = f"ORG#{uuid.uuid4().hex}"
    for n in range(10):
        dynamodb.put_item(TableName="main", Item={"pk": {"S": f"{marker}#{n}"}, "sk": {"S": "a"}})

    # When: each is overwritten, read back by queries and a scan, and counted by transactions (which
    # moto prepares by copying the whole table)
    for n in range(10):
        key = {"pk": {"S": f"{marker}#{n}"}, "sk": {"S": "a"}}
        dynamodb.put_item(TableName="main", Item={**key, "v": {"N": "1"}})
        dynamodb.query(
            TableName="main",
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues={":pk": key["pk"]},
        )
        dynamodb.transact_write_items(
            TransactItems=[
                {
                    "Update": {
                        "TableName": "main",
                        "Key": key,
                        "UpdateExpression": "ADD v :one",
                        "ExpressionAttributeValues": {":one": {"N": "1"}},
                    }
                }
            ]
        )
    dynamodb.scan(TableName="main")

    # Then: the table holds its ten items, and moto holds no other copy of them
    assert dynamodb.scan(TableName="main", Select="COUNT")["Count"] == 10
    assert items_alive(marker) == 10


def test_a_cancelled_transaction_leaves_every_item_as_it_was(dynamodb: DynamoDBClient) -> None:
    # Given: a counter at 1 and a marker, and no item for a second marker
    marker = f"ORG#{uuid.uuid4().hex}"
    counter = {"pk": {"S": f"{marker}#day"}, "sk": {"S": "counts"}}
    dynamodb.put_item(TableName="main", Item={**counter, "sent": {"N": "1"}})
    dynamodb.put_item(TableName="main", Item={"pk": {"S": f"{marker}#a"}, "sk": {"S": "m"}})

    # When: a transaction adds to the counter and puts the second marker, but its last condition fails
    with pytest.raises(dynamodb.exceptions.TransactionCanceledException):
        dynamodb.transact_write_items(
            TransactItems=[
                {
                    "Update": {
                        "TableName": "main",
                        "Key": counter,
                        "UpdateExpression": "ADD sent :one",
                        "ExpressionAttributeValues": {":one": {"N": "1"}},
                    }
                },
                {"Put": {"TableName": "main", "Item": {"pk": {"S": f"{marker}#b"}, "sk": {"S": "m"}}}},
                {
                    "Put": {
                        "TableName": "main",
                        "Item": {"pk": {"S": f"{marker}#a"}, "sk": {"S": "m"}},
                        "ConditionExpression": "attribute_not_exists(pk)",
                    }
                },
            ]
        )

    # Then: nothing of it was written: the counter is still 1, the second marker absent, the first kept
    assert dynamodb.get_item(TableName="main", Key=counter)["Item"]["sent"] == {"N": "1"}
    assert "Item" not in dynamodb.get_item(
        TableName="main", Key={"pk": {"S": f"{marker}#b"}, "sk": {"S": "m"}}
    )
    assert "Item" in dynamodb.get_item(TableName="main", Key={"pk": {"S": f"{marker}#a"}, "sk": {"S": "m"}})
    # And the next transaction on the same items still writes all of its items
    dynamodb.transact_write_items(
        TransactItems=[
            {
                "Update": {
                    "TableName": "main",
                    "Key": counter,
                    "UpdateExpression": "ADD sent :one",
                    "ExpressionAttributeValues": {":one": {"N": "1"}},
                }
            },
            {"Put": {"TableName": "main", "Item": {"pk": {"S": f"{marker}#b"}, "sk": {"S": "m"}}}},
        ]
    )
    assert dynamodb.get_item(TableName="main", Key=counter)["Item"]["sent"] == {"N": "2"}
    assert items_alive(marker) == 3
