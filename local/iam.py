"""IAM enforcement in front of the local stack's moto: a function's AWS call outside its role is
refused with AccessDenied, as AWS refuses it.

moto 5.2.5 has an IAM enforcement of its own (``INITIAL_NO_AUTH_ACTION_COUNT``), but it cannot be the
local stack's: it is one switch for the whole process (the unit tests' in-process ``mock_aws`` would
be enforced too), and it authorizes every service but S3 against the resource ``"*"``
(``moto/core/responses.py``: ``call_action`` passes ``"*"`` unless a service defines
``_determine_resource``, which only SQS, IAM and STS do), so a statement naming a table never matches
and a grant on one table would cover all of them. This middleware uses moto's own parts (the roles
and their inline policies in moto's IAM, the credentials moto's STS issued, moto's ``IAMPolicy``
statement matching) with the resource each call really acts on, the way AWS evaluates it:

- the caller is found by the access key of its signature (header, presigned query, or the form of
  a presigned POST); a key moto's STS issued for a function's role is enforced, any other key is
  this process's own administrator (tests, seeding, ``make dev``'s jobs) and passes;
- each call becomes the IAM actions and resource ARNs AWS authorizes it as (``authorizations``),
  including what a service does with the caller's permissions on its behalf: S3 reading or writing
  an SSE-KMS object needs ``kms:Decrypt`` / ``kms:GenerateDataKey`` on the bucket's key, Secrets
  Manager returning a secret encrypted with a customer key needs ``kms:Decrypt`` on it;
- every pair must be allowed by some statement and denied by none.

What it does not evaluate (``docs/permissions.md`` lists it, and ``tests/unit/test_permissions.py``
covers it by reading the template): conditions (moto's ``IAMPolicy`` treats them as met), key
policies, bucket and other resource policies, permission boundaries, and signatures (the access key
identifies the role; the signature itself is not checked).
"""

from __future__ import annotations

import base64
import html
import io
import json
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, unquote

from moto.iam.access_control import IAMPolicy, PermissionResult

from local.template import ACCOUNT_ID

REGION = "eu-west-1"
Authorization = tuple[str, str]  # (IAM action, resource ARN)


@dataclass
class EncryptionKeys:
    """The KMS key a service uses with the caller's permissions, by resource: each bucket's default
    SSE-KMS key and each secret's ``KmsKeyId`` (from the template, resolved)."""

    buckets: dict[str, str] = field(default_factory=dict)  # bucket name -> key ARN
    secrets: dict[str, str] = field(default_factory=dict)  # secret ARN or name -> key ARN


@dataclass(frozen=True)
class Caller:
    """A function's role, as it signs its calls."""

    function: str
    role_arn: str
    policies: tuple[str, ...]  # the role's policy documents (JSON)

    @property
    def assumed_arn(self) -> str:
        role = self.role_arn.rsplit("/", 1)[-1]
        return f"arn:aws:sts::{ACCOUNT_ID}:assumed-role/{role}/local-{self.function}"

    def allows(self, action: str, resource: str) -> bool:
        """AWS's rule for identity policies: some statement allows, none denies."""
        allowed = False
        for document in self.policies:
            result = IAMPolicy(document).is_action_permitted(action, resource)
            if result == PermissionResult.DENIED:
                return False
            allowed = allowed or result == PermissionResult.PERMITTED
        return allowed


@dataclass(frozen=True)
class Denial:
    """A call refused: who, what, on what."""

    function: str
    action: str
    resource: str


class IamEnforcement:
    """WSGI middleware in front of moto: refuses a function's call its role does not allow."""

    def __init__(self, app: Callable[..., Iterable[bytes]], keys: EncryptionKeys | None = None) -> None:
        self._app = app
        self.keys = keys or EncryptionKeys()
        self._callers: dict[str, Caller] = {}  # access key id -> the function's role
        self._lock = threading.Lock()
        self.enforcing = False
        self._denials: list[Denial] = []
        self._allowed: set[tuple[str, str, str]] = set()

    def register(self, access_key_id: str, caller: Caller) -> None:
        with self._lock:
            self._callers[access_key_id] = caller

    def denials(self) -> list[Denial]:
        """Every call refused since start (or ``clear_denials``)."""
        with self._lock:
            return list(self._denials)

    def allowed(self) -> set[tuple[str, str, str]]:
        """Every (function, action, resource) a role allowed since start: the grants in use."""
        with self._lock:
            return set(self._allowed)

    def clear_denials(self) -> None:
        with self._lock:
            self._denials.clear()

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if not self.enforcing:
            return self._app(environ, start_response)
        request = _Request.read(environ)
        if request.truncated:
            # The caller died while sending (a test killed its worker mid-call): AWS never sees a
            # request whose body did not arrive whole, so nothing is authorized, refused or done.
            start_response("400 Bad Request", [("Content-Length", "0")])
            return []
        caller = self._callers.get(request.access_key_id or "")
        if caller is None:
            return self._app(environ, start_response)
        for action, resource in authorizations(request, self.keys):
            if not caller.allows(action, resource):
                with self._lock:
                    self._denials.append(Denial(caller.function, action, resource))
                return _access_denied(request, caller, action, resource, start_response)
            with self._lock:
                self._allowed.add((caller.function, action, resource))
        return self._app(environ, start_response)


@dataclass
class _Request:
    """What authorization needs of an AWS request."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes
    form: dict[str, str]
    access_key_id: str | None
    # Fewer body bytes arrived than Content-Length announced: the sender went away mid-request.
    truncated: bool = False

    @property
    def target(self) -> str:
        return self.headers.get("x-amz-target", "")

    @classmethod
    def read(cls, environ: dict[str, Any]) -> _Request:
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length) if length else b""
        environ["wsgi.input"] = io.BytesIO(body)  # moto reads it again
        headers = {
            key[5:].replace("_", "-").lower(): value
            for key, value in environ.items()
            if key.startswith("HTTP_")
        }
        if environ.get("CONTENT_TYPE"):
            headers["content-type"] = environ["CONTENT_TYPE"]
        query = dict(parse_qsl(environ.get("QUERY_STRING", ""), keep_blank_values=True))
        form = _form_fields(headers.get("content-type", ""), body)
        credential = (
            _between(headers.get("authorization", ""), "Credential=", ",")
            or query.get("X-Amz-Credential", "")
            or next((value for key, value in form.items() if key.lower() == "x-amz-credential"), "")
        )
        return cls(
            environ.get("REQUEST_METHOD", ""),
            unquote(environ.get("PATH_INFO", "")),
            query,
            headers,
            body,
            form,
            credential.split("/", 1)[0] or None,
            truncated=len(body) < length,
        )


def _between(text: str, start: str, end: str) -> str:
    return text.partition(start)[2].partition(end)[0]


def _form_fields(content_type: str, body: bytes) -> dict[str, str]:
    """The text fields of a multipart form (a presigned POST upload), the file left out."""
    if not content_type.startswith("multipart/form-data"):
        return {}
    boundary = content_type.partition("boundary=")[2].strip('"').encode()
    if not boundary:
        return {}
    fields = {}
    for part in body.split(b"--" + boundary):
        head, _, value = part.partition(b"\r\n\r\n")
        name = _between(head.decode(errors="replace"), 'name="', '"')
        if name and "filename=" not in head.decode(errors="replace"):
            fields[name] = value.rstrip(b"\r\n").decode(errors="replace")
    return fields


def authorizations(request: _Request, keys: EncryptionKeys) -> list[Authorization]:
    """The (action, resource ARN) pairs AWS authorizes ``request`` as."""
    target = request.target
    if not target:
        return _s3(request, keys)
    api, _, operation = target.partition(".")
    body: dict[str, Any] = json.loads(request.body or b"{}")
    if api.startswith("DynamoDB"):
        return _dynamodb(operation, body)
    if api == "TrentService":
        return _kms(operation, body)
    if api == "secretsmanager":
        return _secretsmanager(operation, body, keys)
    if api == "AWSStepFunctions":
        return [(f"states:{operation}", _states_resource(body))]
    if api == "AWSCognitoIdentityProviderService":
        pool = body.get("UserPoolId")
        resource = f"arn:aws:cognito-idp:{REGION}:{ACCOUNT_ID}:userpool/{pool}" if pool else "*"
        return [(f"cognito-idp:{operation}", resource)]
    if api.startswith("AWSSecurityTokenServiceV"):
        return []
    return [(f"{api.lower()}:{operation}", "*")]


def _table_arn(name: str) -> str:
    return f"arn:aws:dynamodb:{REGION}:{ACCOUNT_ID}:table/{name}"


def _dynamodb(operation: str, body: dict[str, Any]) -> list[Authorization]:
    if operation in ("BatchGetItem", "BatchWriteItem"):
        return [(f"dynamodb:{operation}", _table_arn(name)) for name in body.get("RequestItems", {})]
    if operation == "TransactWriteItems":
        actions = {
            "Put": "PutItem",
            "Update": "UpdateItem",
            "Delete": "DeleteItem",
            "ConditionCheck": "ConditionCheckItem",
        }
        return [
            (f"dynamodb:{actions[kind]}", _table_arn(item[kind]["TableName"]))
            for item in body.get("TransactItems", [])
            for kind in item
            if kind in actions
        ]
    if operation == "TransactGetItems":
        return [
            ("dynamodb:GetItem", _table_arn(item["Get"]["TableName"]))
            for item in body.get("TransactItems", [])
        ]
    table = body.get("TableName")
    if table is None:
        return [(f"dynamodb:{operation}", "*")]
    resource = _table_arn(table)
    if body.get("IndexName"):
        resource += f"/index/{body['IndexName']}"
    return [(f"dynamodb:{operation}", resource)]


def _key_arn(key: str) -> str:
    from moto.kms.models import kms_backends

    key_id = kms_backends[ACCOUNT_ID][REGION].any_id_to_key_id(key)
    return f"arn:aws:kms:{REGION}:{ACCOUNT_ID}:key/{key_id}"


def _kms(operation: str, body: dict[str, Any]) -> list[Authorization]:
    key = body.get("KeyId")
    if key is None and "CiphertextBlob" in body:
        from moto.kms.utils import _deserialize_ciphertext_blob

        key = _deserialize_ciphertext_blob(base64.b64decode(body["CiphertextBlob"])).key_id
    return [(f"kms:{operation}", _key_arn(key) if key else "*")]


def _secret_arn(secret: str) -> str:
    if secret.startswith("arn:"):
        return secret
    from moto.secretsmanager.models import secretsmanager_backends

    return str(secretsmanager_backends[ACCOUNT_ID][REGION].describe_secret(secret).arn)


def _secretsmanager(operation: str, body: dict[str, Any], keys: EncryptionKeys) -> list[Authorization]:
    secret = body.get("SecretId")
    if secret is None:
        return [(f"secretsmanager:{operation}", "*")]
    arn = _secret_arn(secret)
    found = [(f"secretsmanager:{operation}", arn)]
    key = keys.secrets.get(arn) or keys.secrets.get(secret)
    if key is not None and operation == "GetSecretValue":
        found.append(("kms:Decrypt", key))  # Secrets Manager decrypts with the caller's permission
    if key is not None and operation == "PutSecretValue":
        found.append(("kms:GenerateDataKey", key))
    return found


def _states_resource(body: dict[str, Any]) -> str:
    for name in ("executionArn", "stateMachineArn", "activityArn", "mapRunArn"):
        if name in body:
            return str(body[name])
    return "*"


def _s3(request: _Request, keys: EncryptionKeys) -> list[Authorization]:
    """S3 REST requests, path-style (``/bucket/key``) as the service's clients send them locally."""
    bucket, _, key = request.path.lstrip("/").partition("/")
    if not bucket:
        return [("s3:ListAllMyBuckets", "*")]
    bucket_arn = f"arn:aws:s3:::{bucket}"
    query, method = request.query, request.method
    encryption_key = keys.buckets.get(bucket)
    if not key:
        if method == "POST" and "delete" in query:
            return _s3_batch_delete(request, bucket_arn)
        if method == "POST" and request.form.get("key"):  # a presigned POST: the signer's PutObject
            found = [("s3:PutObject", f"{bucket_arn}/{request.form['key']}")]
            return found + ([("kms:GenerateDataKey", encryption_key)] if encryption_key else [])
        if method in ("GET", "HEAD"):
            action = next(
                (action for name, action in _BUCKET_READS if name in query),
                "s3:ListBucket",
            )
            return [(action, bucket_arn)]
        return [(f"s3:{'PutBucket' if method == 'PUT' else 'DeleteBucket'}", bucket_arn)]
    object_arn = f"{bucket_arn}/{key}"
    if method in ("GET", "HEAD"):
        if "uploadId" in query:
            return [("s3:ListMultipartUploadParts", object_arn)]
        if "tagging" in query:
            return [("s3:GetObjectTagging", object_arn)]
        action = "s3:GetObjectVersion" if "versionId" in query else "s3:GetObject"
        return [(action, object_arn)] + ([("kms:Decrypt", encryption_key)] if encryption_key else [])
    if method == "DELETE":
        if "uploadId" in query:
            return [("s3:AbortMultipartUpload", object_arn)]
        return [("s3:DeleteObjectVersion" if "versionId" in query else "s3:DeleteObject", object_arn)]
    if method == "PUT" and "tagging" in query:
        return [("s3:PutObjectTagging", object_arn)]
    found = [("s3:PutObject", object_arn)]
    source = request.headers.get("x-amz-copy-source")
    if source:
        found.append(("s3:GetObject", f"arn:aws:s3:::{unquote(source).lstrip('/').split('?')[0]}"))
    if encryption_key and not ("partNumber" in query or (method == "POST" and "uploadId" in query)):
        found.append(("kms:GenerateDataKey", encryption_key))
    if source and encryption_key:
        found.append(("kms:Decrypt", encryption_key))
    return found


_BUCKET_READS = (
    ("versions", "s3:ListBucketVersions"),
    ("uploads", "s3:ListBucketMultipartUploads"),
    ("location", "s3:GetBucketLocation"),
    ("cors", "s3:GetBucketCORS"),
    ("encryption", "s3:GetEncryptionConfiguration"),
    ("versioning", "s3:GetBucketVersioning"),
    ("policy", "s3:GetBucketPolicy"),
)


def _s3_batch_delete(request: _Request, bucket_arn: str) -> list[Authorization]:
    """DeleteObjects is authorized as s3:DeleteObject (s3:DeleteObjectVersion with a version) on each key."""
    found = []
    for entry in re.findall(r"<Object>(.*?)</Object>", request.body.decode(), re.S):
        key = re.search(r"<Key>(.*?)</Key>", entry, re.S)
        version = re.search(r"<VersionId>(.*?)</VersionId>", entry, re.S)
        if key is not None:
            action = "s3:DeleteObjectVersion" if version else "s3:DeleteObject"
            found.append((action, f"{bucket_arn}/{html.unescape(key.group(1))}"))
    return found


def _access_denied(
    request: _Request, caller: Caller, action: str, resource: str, start_response: Callable[..., Any]
) -> Iterable[bytes]:
    """The service's own AccessDenied answer, with AWS's message."""
    message = (
        f"User: {caller.assumed_arn} is not authorized to perform: {action} on resource: {resource} "
        f"because no identity-based policy allows the {action} action"
    )
    if request.target:
        body = json.dumps(
            {"__type": "AccessDeniedException", "message": message, "Message": message}
        ).encode()
        start_response(
            "400 Bad Request",
            [("Content-Type", "application/x-amz-json-1.0"), ("Content-Length", str(len(body)))],
        )
        return [body]
    xml = (
        '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code>'
        f"<Message>{message}</Message><RequestId>local</RequestId></Error>"
    ).encode()
    start_response("403 Forbidden", [("Content-Type", "application/xml"), ("Content-Length", str(len(xml)))])
    return [] if request.method == "HEAD" else [xml]
