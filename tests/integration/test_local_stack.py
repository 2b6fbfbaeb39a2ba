"""The local stack end to end: resources from the template, the gateway, auth on a real route."""

from __future__ import annotations

import httpx

from local.seed import DemoCredentials
from local.stack import LocalStack
from shared import wiring
from shared.clock import utc_now


def test_tables_are_created_from_the_template_with_their_indexes(stack: LocalStack) -> None:
    # When
    table = stack.client("dynamodb").describe_table(TableName=stack.physical["MainTable"].ref)["Table"]
    # Then
    assert {k["AttributeName"] for k in table["KeySchema"]} == {"pk", "sk"}
    assert [i["IndexName"] for i in table["GlobalSecondaryIndexes"]] == ["gsi1"]


def test_buckets_are_kms_encrypted_and_block_public_access(stack: LocalStack) -> None:
    s3 = stack.client("s3")
    for logical_id in ("ArtifactsBucket", "DataBucket"):
        bucket = stack.physical[logical_id].ref
        rule = s3.get_bucket_encryption(Bucket=bucket)["ServerSideEncryptionConfiguration"]["Rules"][0]
        assert rule["ApplyServerSideEncryptionByDefault"]["SSEAlgorithm"] == "aws:kms"
        block = s3.get_public_access_block(Bucket=bucket)["PublicAccessBlockConfiguration"]
        assert all(block.values())


def test_models_route_accepts_the_key_in_the_service_header(api: httpx.Client, demo: DemoCredentials) -> None:
    # When
    response = api.get("/client/models", headers={"X-Service-Api-Key": demo.api_key})
    # Then
    assert response.status_code == 200
    assert "models" in response.json()


def test_models_route_accepts_the_key_as_a_bearer_token(api: httpx.Client, demo: DemoCredentials) -> None:
    response = api.get("/client/models", headers={"Authorization": f"Bearer {demo.api_key}"})
    assert response.status_code == 200


def test_a_missing_key_gets_401_saying_the_key_is_missing(api: httpx.Client) -> None:
    # When
    response = api.get("/client/models")
    # Then
    assert response.status_code == 401
    body = response.json()
    assert body["success"] is False
    assert "API key is missing" in body["message"]


def test_a_malformed_key_gets_401_json(api: httpx.Client) -> None:
    response = api.get("/client/models", headers={"X-Service-Api-Key": "not-a-key"})
    assert response.status_code == 401
    assert response.headers["content-type"].startswith("application/json")
    assert response.json()["error"]["code"] == "unauthorized"


def test_a_revoked_key_is_refused(api: httpx.Client, stack: LocalStack, demo: DemoCredentials) -> None:
    # Given: a second key of the demo organization, then revoked
    from shared.auth.api_keys import issue_key

    new = issue_key(demo.org_id, "to revoke", utc_now())
    wiring.api_key_store().put(new.stored)
    assert api.get("/client/models", headers={"X-Service-Api-Key": new.key}).status_code == 200
    # When
    assert wiring.api_key_store().revoke(demo.org_id, new.stored.key_id, utc_now())
    # Then
    response = api.get("/client/models", headers={"X-Service-Api-Key": new.key})
    assert response.status_code == 401
    assert "revoked" in response.json()["message"]


def test_an_unknown_route_gets_404(api: httpx.Client) -> None:
    response = api.get("/no/such/route")
    assert response.status_code == 404


def test_the_demo_user_gets_a_real_rs256_jwt_from_cognito(stack: LocalStack, demo: DemoCredentials) -> None:
    # When: the service's verifier checks the token against moto's JWKS over HTTP
    from shared import wiring

    claims = wiring.jwt_verifier().verify(demo.id_token)
    # Then
    assert claims["sub"] == demo.user_id
    assert wiring.organization_store().org_of(claims["sub"]) == demo.org_id
