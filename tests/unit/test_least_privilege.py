"""Least privilege, derived from use (issue 24, item 2): each function's role in ``template.yaml``
grants exactly the AWS calls its code can make, as ``scripts/aws_calls.py`` reads them from the code
(the handler's reachable code, the repositories it builds, the resources its environment names).

A grant no code path uses fails here, and so does a call the role does not grant. The local stack
refuses the second at run time too, but only on the paths a test takes; this test reads every path.
Conditions (``dynamodb:LeadingKeys``) and S3 key prefixes narrow a grant further and are not
compared: the analysis cannot see keys, and the local stack enforces the prefixes.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

import pytest

from local.template import load_template, resources_of_type
from scripts import aws_calls
from scripts.permissions import grants

Pair = tuple[str, str]


@cache
def template() -> dict[str, Any]:
    return load_template()


def functions() -> dict[str, str]:
    """``{function: handler module}`` for every function of the template."""
    default = template()["Globals"]["Function"]["Handler"]
    found = {}
    for name, resource in resources_of_type(template(), "AWS::Serverless::Function").items():
        properties = resource["Properties"]
        handler = properties.get("Handler", default).rsplit(".", 1)[0]
        found[name] = properties["CodeUri"].strip("/").replace("/", ".") + "." + handler
    return found


def environment(function: str) -> dict[str, Any]:
    variables = dict(template()["Globals"]["Function"]["Environment"]["Variables"])
    properties = template()["Resources"][function]["Properties"]
    variables.update(properties.get("Environment", {}).get("Variables", {}))
    return variables


@cache
def used(function: str) -> dict[Pair, set[str]]:
    """``{(action, resource): code paths}`` the function's code may call."""
    found = aws_calls.function_grants(functions()[function], environment(function), template())
    return {(grant.action, grant.resource): paths for grant, paths in found.items()}


@cache
def granted() -> dict[str, set[Pair]]:
    """Each function's (action, resource) grants; an S3 key prefix (``DataBucket/sources/*``) is
    compared as the bucket's objects (``DataBucket/*``)."""
    return {
        function: {(action, re.sub(r"^(\w+Bucket)/.+$", r"\1/*", resource)) for action, resource, _ in rows}
        for function, rows in grants().items()
    }


def unused_and_missing(held: set[Pair], calls: set[Pair]) -> tuple[list[Pair], list[Pair]]:
    """The grants no call needs, and the calls no grant allows."""
    return sorted(held - calls), sorted(calls - held)


@pytest.mark.parametrize("function", sorted(functions()))
def test_a_functions_role_grants_exactly_what_its_code_calls(function: str) -> None:
    # Given: the function's role as SAM creates it, and the calls its code can make
    held, calls = granted().get(function, set()), used(function)
    # When: they are compared
    unused, missing = unused_and_missing(held, set(calls))
    # Then: nothing is granted that no code path uses, and nothing used is left out
    assert unused == [], f"{function}: granted, no code path calls it (remove from template.yaml)"
    assert missing == [], f"{function}: called and not granted: " + "; ".join(
        f"{action} {resource} by {sorted(calls[(action, resource)])}" for action, resource in missing
    )


def test_a_grant_added_without_a_caller_is_found() -> None:
    # Given: the API key creator's grants plus a Scan no code makes (what DynamoDBReadPolicy gave)
    calls = set(used("CreateApiKeyFunction"))
    held = granted()["CreateApiKeyFunction"] | {("dynamodb:Scan", "table/MainTable")}
    # When / Then: the Scan is named as unused
    assert unused_and_missing(held, calls) == ([("dynamodb:Scan", "table/MainTable")], [])


def test_a_call_left_out_of_the_role_is_found() -> None:
    # Given: the revoker's grants without the usage table's UpdateItem (issue 24's RevokeApiKey finding)
    calls = set(used("RevokeApiKeyFunction"))
    held = granted()["RevokeApiKeyFunction"] - {("dynamodb:UpdateItem", "table/UsageTable")}
    # When / Then: the call is named as missing
    assert unused_and_missing(held, calls) == ([], [("dynamodb:UpdateItem", "table/UsageTable")])


def test_the_reading_follows_transactions_batches_and_helpers() -> None:
    # Given: repository methods that call AWS through table.meta.client (a transaction, a batch
    # get) and through module-level helpers with an index (org_key_items -> query_all)
    calls = aws_calls.repository_calls()["shared.repositories.api_keys.DynamoApiKeyStore"]
    # Then: each call is read as the IAM action on the table (or its index) it was built with
    assert aws_calls.Call("dynamodb:PutItem", "table") in calls["put"]
    assert calls["list_for_org"] >= {
        aws_calls.Call("dynamodb:Query", "table"),
        aws_calls.Call("dynamodb:Query", "table", index="gsi1"),
        aws_calls.Call("dynamodb:BatchGetItem", "table"),
    }


def test_a_failed_multipart_upload_is_aborted_with_its_own_action() -> None:
    # Given: the blob store's upload (a multipart upload aborted when a part fails)
    calls = aws_calls.repository_calls()["shared.repositories.blobs.S3BlobStore"]["upload"]
    # Then: AbortMultipartUpload is an action of its own, which S3CrudPolicy never granted
    assert {call.action for call in calls} >= {"s3:PutObject", "s3:AbortMultipartUpload"}
