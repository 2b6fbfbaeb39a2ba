"""What ``to_item`` makes of a float DynamoDB cannot store as it is: a magnitude under 1E-130 (the
fuzzer's 5e-324 in a request's float field raised decimal's Underflow, a 500) is stored as 0."""

from __future__ import annotations

from decimal import Decimal

from boto3.dynamodb.types import TypeSerializer

from shared.repositories.items import to_item


def test_a_float_nearer_zero_than_dynamodb_stores_is_stored_as_zero() -> None:
    item = to_item({"tiny": 5e-324, "small": -1e-131, "kept": 1e-130, "score": 0.125, "zero": 0.0})
    assert item == {
        "tiny": Decimal(0),
        "small": Decimal(0),
        "kept": Decimal("1e-130"),
        "score": Decimal("0.125"),
        "zero": Decimal("0.0"),
    }
    # And every value is one boto3 serializes for DynamoDB (it raised on 5e-324 before)
    TypeSerializer().serialize(item)
