"""What the local stack authorizes each AWS call as (``local.iam``): the IAM actions and resource ARNs
AWS checks, including the KMS use a service makes with the caller's permissions; and the refusal."""

from __future__ import annotations

import io
import json
from typing import Any

from local.iam import Caller, EncryptionKeys, IamEnforcement, _Request, authorizations

TABLE = "arn:aws:dynamodb:eu-west-1:123456789012:table/"
KEY = "arn:aws:kms:eu-west-1:123456789012:key/1234abcd-0000-4000-8000-000000000000"
SECRET = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:local-PlatformSecrets-AbCdEf"
SIGNER = "ASIAFUNCTION/20260101/eu-west-1"
KEYS = EncryptionKeys(buckets={"data": KEY}, secrets={SECRET: KEY})


def request(
    method: str, path: str, *, target: str = "", body: Any = b"", query: str = "", **headers: str
) -> _Request:
    raw = json.dumps(body).encode() if isinstance(body, dict) else body
    environ = {
        "REQUEST_METHOD": method,
        "PATH_INFO": path,
        "QUERY_STRING": query,
        "CONTENT_LENGTH": str(len(raw)),
        "wsgi.input": io.BytesIO(raw),
        "HTTP_AUTHORIZATION": f"AWS4-HMAC-SHA256 Credential={SIGNER}/x/aws4_request, ...",
        **({"HTTP_X_AMZ_TARGET": target} if target else {}),
        **{f"HTTP_{name.upper()}": value for name, value in headers.items()},
    }
    return _Request.read(environ)


def test_a_query_on_an_index_is_authorized_on_the_index() -> None:
    found = authorizations(
        request(
            "POST", "/", target="DynamoDB_20120810.Query", body={"TableName": "main", "IndexName": "gsi1"}
        ),
        KEYS,
    )
    assert found == [("dynamodb:Query", f"{TABLE}main/index/gsi1")]


def test_a_transaction_is_authorized_item_by_item_on_each_table() -> None:
    body = {"TransactItems": [{"Put": {"TableName": "main"}}, {"Update": {"TableName": "usage"}}]}
    found = authorizations(
        request("POST", "/", target="DynamoDB_20120810.TransactWriteItems", body=body), KEYS
    )
    assert found == [("dynamodb:PutItem", f"{TABLE}main"), ("dynamodb:UpdateItem", f"{TABLE}usage")]


def test_reading_a_secret_encrypted_with_a_customer_key_needs_decrypt_on_it() -> None:
    found = authorizations(
        request("POST", "/", target="secretsmanager.GetSecretValue", body={"SecretId": SECRET}), KEYS
    )
    assert found == [("secretsmanager:GetSecretValue", SECRET), ("kms:Decrypt", KEY)]


def test_s3_objects_of_an_sse_kms_bucket_need_the_bucket_key() -> None:
    assert authorizations(request("GET", "/data/uploads/a.csv"), KEYS) == [
        ("s3:GetObject", "arn:aws:s3:::data/uploads/a.csv"),
        ("kms:Decrypt", KEY),
    ]
    assert authorizations(request("PUT", "/data/uploads/a.csv"), KEYS) == [
        ("s3:PutObject", "arn:aws:s3:::data/uploads/a.csv"),
        ("kms:GenerateDataKey", KEY),
    ]


def test_a_batch_delete_is_authorized_key_by_key() -> None:
    body = (
        b"<Delete><Object><Key>a/1</Key><VersionId>v1</VersionId></Object>"
        b"<Object><Key>a/2</Key></Object><Quiet>true</Quiet></Delete>"
    )
    found = authorizations(request("POST", "/data", query="delete=", body=body), KEYS)
    assert found == [
        ("s3:DeleteObjectVersion", "arn:aws:s3:::data/a/1"),
        ("s3:DeleteObject", "arn:aws:s3:::data/a/2"),
    ]


def test_listing_versions_is_list_bucket_versions_on_the_bucket() -> None:
    found = authorizations(request("GET", "/data", query="versions=&prefix=a%2F"), KEYS)
    assert found == [("s3:ListBucketVersions", "arn:aws:s3:::data")]


def test_a_call_outside_the_role_is_refused_with_access_denied() -> None:
    # Given a role that may only read one table
    policy = {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Action": ["dynamodb:GetItem"], "Resource": f"{TABLE}main"}],
    }
    passed: list[str] = []

    def moto(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        passed.append(environ["HTTP_X_AMZ_TARGET"])
        start_response("200 OK", [])
        return [b"{}"]

    enforcement = IamEnforcement(moto)
    enforcement.enforcing = True
    enforcement.register(
        "ASIAFUNCTION", Caller("Reader", "arn:aws:iam::123456789012:role/r", (json.dumps(policy),))
    )
    statuses: list[str] = []

    def call(target: str, table: str) -> dict[str, Any]:
        raw = json.dumps({"TableName": table}).encode()
        environ = {
            "REQUEST_METHOD": "POST",
            "PATH_INFO": "/",
            "CONTENT_LENGTH": str(len(raw)),
            "wsgi.input": io.BytesIO(raw),
            "HTTP_AUTHORIZATION": f"AWS4-HMAC-SHA256 Credential={SIGNER}/dynamodb/aws4_request",
            "HTTP_X_AMZ_TARGET": target,
        }
        answer = b"".join(enforcement(environ, lambda status, headers: statuses.append(status)))
        return dict(json.loads(answer))

    # When it reads its table, writes it, and reads another
    call("DynamoDB_20120810.GetItem", "main")
    refused_write = call("DynamoDB_20120810.PutItem", "main")
    refused_read = call("DynamoDB_20120810.GetItem", "usage")

    # Then only the first reached moto; the others got DynamoDB's AccessDeniedException
    assert passed == ["DynamoDB_20120810.GetItem"]
    assert statuses == ["200 OK", "400 Bad Request", "400 Bad Request"]
    assert refused_write["__type"] == refused_read["__type"] == "AccessDeniedException"
    assert "is not authorized to perform: dynamodb:PutItem on resource: " in refused_write["message"]
    assert [d.action for d in enforcement.denials()] == ["dynamodb:PutItem", "dynamodb:GetItem"]
