"""The local stack's moto server honours TransactWriteItems' client token as DynamoDB does (moto alone
ignores it): a retry of a transaction whose answer was lost is answered as the first attempt was, not
refused by its own condition (seen in a CI dry run: an API key stored, the read timed out behind a slow
request, botocore's retry with the same token refused by attribute_not_exists)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from local.stack import LocalStack

pytestmark = pytest.mark.integration


@pytest.fixture
def table(stack: LocalStack) -> Iterator[tuple[Any, str]]:
    client = boto3.client(
        "dynamodb",
        endpoint_url=stack.moto_url,
        region_name="eu-west-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    name = f"tokens-{uuid.uuid4().hex[:8]}"
    client.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    yield client, name
    client.delete_table(TableName=name)


def put(table: str, pk: str, token: str) -> dict[str, Any]:
    item = {"TableName": table, "Item": {"pk": {"S": pk}}, "ConditionExpression": "attribute_not_exists(pk)"}
    return {"TransactItems": [{"Put": item}], "ClientRequestToken": token}


def test_a_retried_transaction_with_its_token_succeeds_without_writing_again(table: tuple[Any, str]) -> None:
    client, name = table
    first = str(uuid.uuid4())
    # Given a conditional transaction that succeeded
    client.transact_write_items(**put(name, "a", first))
    # When it is sent again with the same token (a retry after a lost answer)
    client.transact_write_items(**put(name, "a", first))
    # Then it succeeds, and the item is there once
    assert client.scan(TableName=name)["Count"] == 1


def test_another_call_is_still_refused_by_its_condition(table: tuple[Any, str]) -> None:
    client, name = table
    first, second = str(uuid.uuid4()), str(uuid.uuid4())
    client.transact_write_items(**put(name, "a", first))
    with pytest.raises(ClientError, match="TransactionCanceled"):
        client.transact_write_items(**put(name, "a", second))


def test_the_same_token_with_another_request_is_a_mismatch(table: tuple[Any, str]) -> None:
    client, name = table
    first = str(uuid.uuid4())
    client.transact_write_items(**put(name, "a", first))
    with pytest.raises(ClientError, match="IdempotentParameterMismatch"):
        client.transact_write_items(**put(name, "b", first))
