"""The functions' permissions, read from the template: the committed table is current, and what the
local stack's enforcement does not evaluate (docs/permissions.md, "What the local stack does not
evaluate") holds by construction."""

from __future__ import annotations

import re
from typing import Any

from local.roles import sam_roles
from local.template import load_template, resources_of_type
from scripts.permissions import PAGE, page_with_table


def statements(document: dict[str, Any]) -> list[dict[str, Any]]:
    found = document["Statement"]
    return found if isinstance(found, list) else [found]


def function_statements() -> list[tuple[str, dict[str, Any]]]:
    return [
        (function, statement)
        for function, role in sam_roles().items()
        for document in role["policies"].values()
        for statement in statements(document)
    ]


def test_the_permission_table_in_docs_is_current() -> None:
    page = PAGE.read_text()
    assert page_with_table(page) == page, "run: python -m scripts.permissions --write"


def test_every_function_statement_is_a_plain_allow() -> None:
    # Then: no Deny, NotAction or NotResource (moto's matcher mishandles NotResource)
    odd = [
        (function, statement)
        for function, statement in function_statements()
        if statement.get("Effect") != "Allow" or {"NotAction", "NotResource"} & set(statement)
    ]
    assert odd == []


def test_the_only_conditions_keep_dynamodb_writes_to_partition_key_prefixes() -> None:
    # Given the conditions of every function's policy (the local stack treats them as met)
    conditional = [
        (function, statement) for function, statement in function_statements() if "Condition" in statement
    ]
    # Then each limits DynamoDB writes to items whose partition keys start with given prefixes
    assert conditional
    for function, statement in conditional:
        [(operator, keys)] = statement["Condition"].items()
        assert operator == "ForAllValues:StringLike", function
        [(key, prefixes)] = keys.items()
        assert key == "dynamodb:LeadingKeys", function
        assert all(prefix.endswith("#*") for prefix in prefixes), function
        actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
        assert set(actions) <= {"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem"}, function


def test_the_api_key_store_writes_only_api_key_partition_keys() -> None:
    # Given the writes of the API key store (CreateApiKey and RevokeApiKey's only writes to the
    # main table)
    from pathlib import Path

    from shared.repositories import api_keys

    source = Path(api_keys.__file__).read_text()
    # Then every key it builds is an APIKEY# partition key (the keys, and the organization's key list
    # ``APIKEY#ORG#<org>``, written in the same transaction)
    partition_keys = re.findall(r'"pk": f"([^"]*)"', source)
    assert len(partition_keys) >= 3
    assert all(key.startswith("APIKEY#") for key in partition_keys), partition_keys


def test_the_data_key_policy_leaves_its_use_to_iam() -> None:
    # Given the data key's key policy (the local stack does not evaluate key policies)
    [key] = resources_of_type(load_template(), "AWS::KMS::Key").values()
    policy = key["Properties"]["KeyPolicy"]
    # Then its one statement lets the account's IAM policies decide (the roles', which are enforced)
    [statement] = policy["Statement"]
    assert statement["Effect"] == "Allow"
    assert statement["Action"] == "kms:*"
    assert statement["Principal"] == {"AWS": {"Fn::Sub": "arn:${AWS::Partition}:iam::${AWS::AccountId}:root"}}


def test_bucket_policies_neither_grant_nor_deny_the_functions_anything() -> None:
    # Given every bucket policy (the local stack does not evaluate resource policies)
    for name, policy in resources_of_type(load_template(), "AWS::S3::BucketPolicy").items():
        for statement in statements(policy["Properties"]["PolicyDocument"]):
            # Then each denies requests without TLS, or lets CloudFront read the dashboard
            insecure = (
                statement["Effect"] == "Deny" and "aws:SecureTransport" in statement["Condition"]["Bool"]
            )
            cloudfront = statement.get("Principal") == {"Service": "cloudfront.amazonaws.com"}
            assert insecure or cloudfront, name
