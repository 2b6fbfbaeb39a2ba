"""moto server with DynamoDB's guarantee that each write to an item is atomic.

moto applies an UpdateItem as read, check, modify, write on shared Python objects without a lock,
so concurrent requests can lose an ``ADD`` or both pass a ``ConditionExpression`` (measured: 397 of
400 concurrent ADDs kept, and a conditional limit overshot by one). DynamoDB serializes writes to an
item; running moto's DynamoDB requests one at a time gives the local stack the same guarantee, so
concurrency tests exercise the service's code rather than moto's races. Other services run as
before. In front of it all, each function's calls are held to its IAM role (``local.iam``).

moto also keeps every model object it ever builds (``moto.core.common_models.BaseModel.__new__``
appends each to its class's ``instances_tracked``, for its dashboard), so nothing it replaces is ever
freed: every DynamoDB item written, every item a Query or Scan copied out, and the copy of each whole
table ``TransactWriteItems`` takes before writing (``DynamoDBBackend.transact_write_items``). A
test run's process grew by gigabytes that way; the local stack stops that tracking
(``untrack_moto_models``), and moto frees what AWS would have forgotten. That copy of whole tables is
also slow (3.6 s a transaction on a table of 20,000 items): the local stack backs up the items a
transaction names instead, and puts those back when it is cancelled (``transactions_back_up_items``).
"""

from __future__ import annotations

import copy
import io
import json
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

from moto.core.common_models import BaseModel
from moto.dynamodb import models as dynamodb_models
from moto.dynamodb.models import DynamoDBBackend, Table
from moto.dynamodb.models.dynamo_type import DynamoType, Item
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
from werkzeug.serving import BaseWSGIServer, make_server

from local.iam import IamEnforcement

DYNAMODB_TARGET_PREFIX = "DynamoDB_"


def _untracked(cls: type[BaseModel], *args: Any, **kwargs: Any) -> BaseModel:
    return object.__new__(cls)


def untrack_moto_models() -> None:
    """Build moto's model objects without keeping each one in its class's ``instances_tracked``
    (only moto's dashboard and its reset read it; a reset still disposes every stored S3 object), so
    an item, object or table copy moto no longer refers to is freed (the module's docstring)."""
    BaseModel.__new__ = staticmethod(_untracked)  # type: ignore[method-assign]


class _TablesNotCopied:
    """Stands in for the ``copy`` module in ``moto.dynamodb.models``, whose ``transact_write_items``
    deep-copies each table it writes to: a table is given back as it is (the transaction's own items
    are backed up instead, by ``_transact_write_items``); anything else is deep-copied as before."""

    @staticmethod
    def deepcopy(value: Any, memo: dict[int, Any] | None = None) -> Any:
        return value if isinstance(value, Table) else copy.deepcopy(value, memo)


_moto_transact_write_items = DynamoDBBackend.transact_write_items


_Backup = tuple[Table, DynamoType, DynamoType | None, Item | None]


def _backup(backend: DynamoDBBackend, op: dict[str, Any]) -> _Backup | None:
    """The table, key and a copy of the item (None if there is none) one operation of a transaction
    names; None when moto would refuse the operation itself, before writing it."""
    try:
        table = backend.get_table(op["TableName"])
        hash_key, range_key = backend.get_keys_value(table, op["Key"] if "Key" in op else op["Item"])
        before = table.get_item(hash_key, range_key)
    except Exception:
        return None
    return table, hash_key, range_key, copy.deepcopy(before)


def _transact_write_items(self: DynamoDBBackend, transact_items: list[dict[str, Any]]) -> None:
    """moto's TransactWriteItems with a copy of each item it names kept beforehand, put back (or the
    item removed again) if the transaction is cancelled, as DynamoDB writes all of it or nothing."""
    backups = [found for entry in transact_items for op in entry.values() if (found := _backup(self, op))]
    try:
        _moto_transact_write_items(self, transact_items)
    except Exception:
        for table, hash_key, range_key, before in reversed(backups):
            if before is None:
                table.delete_item(hash_key, range_key)
            elif range_key is None:
                table.items[hash_key] = before  # type: ignore[assignment]
            else:
                table.items[hash_key][range_key] = before
        raise


def transactions_back_up_items() -> None:
    """TransactWriteItems copies the items it names before writing, not each whole table (the
    module's docstring)."""
    dynamodb_models.copy = _TablesNotCopied  # type: ignore[assignment]
    DynamoDBBackend.transact_write_items = _transact_write_items  # type: ignore[method-assign]


# How long DynamoDB keeps a TransactWriteItems client token (its API reference: ten minutes).
IDEMPOTENCY_WINDOW_SECONDS = 600.0


class SerializedDynamoDB:
    """WSGI middleware: one DynamoDB request at a time (DynamoDB's API names itself in X-Amz-Target),
    and TransactWriteItems' ``ClientRequestToken`` honoured as DynamoDB does, which moto ignores: the
    same token and request within ten minutes of a success answer that success again without writing
    (botocore sends one token for all attempts of a call, so a retry after a lost answer is not refused
    by the first attempt's own condition); the same token with another request is
    IdempotentParameterMismatchException."""

    def __init__(self, app: Callable[..., Iterable[bytes]]) -> None:
        self._app = app
        self._lock = threading.Lock()
        # token -> (request body, when, status, headers, answer body)
        self._transactions: dict[str, tuple[bytes, float, str, list[tuple[str, str]], bytes]] = {}

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        target = environ.get("HTTP_X_AMZ_TARGET", "")
        if not target.startswith(DYNAMODB_TARGET_PREFIX):
            return self._app(environ, start_response)
        with self._lock:
            if target.endswith(".TransactWriteItems"):
                return self._transaction(environ, start_response)
            # moto builds the whole body before returning; materialise it inside the lock.
            return list(self._app(environ, start_response))

    def _transaction(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length) if length else b""
        environ["wsgi.input"] = io.BytesIO(body)
        try:
            token = json.loads(body or b"{}").get("ClientRequestToken")
        except ValueError:
            token = None
        now = time.monotonic()
        for old in [
            t for t, kept in self._transactions.items() if now - kept[1] > IDEMPOTENCY_WINDOW_SECONDS
        ]:
            del self._transactions[old]
        if token and token in self._transactions:
            sent, _, status, headers, answer = self._transactions[token]
            if sent == body:
                start_response(status, headers)
                return [answer]
            mismatch = json.dumps(
                {
                    "__type": "com.amazonaws.dynamodb.v20120810#IdempotentParameterMismatchException",
                    "message": "The request uses the same client token as a previous, but non-identical "
                    "request.",
                }
            ).encode()
            start_response("400 Bad Request", [("Content-Type", "application/x-amz-json-1.0")])
            return [mismatch]
        answered: dict[str, Any] = {}

        def keep(status: str, headers: list[tuple[str, str]], *rest: Any) -> Any:
            answered.update(status=status, headers=list(headers))
            return start_response(status, headers, *rest)

        answer = b"".join(self._app(environ, keep))
        if token and str(answered.get("status", "")).startswith("200"):
            self._transactions[token] = (body, now, answered["status"], answered["headers"], answer)
        return [answer]


@dataclass(frozen=True)
class AwsRequest:
    """An AWS call as the server received it: ``name`` as the call log has it, the HTTP method,
    path and query (for S3, whose operation is in them)."""

    name: str
    method: str
    path: str
    query: dict[str, str]
    # The signer's access key (Authorization's or a presigned URL's Credential): whose call it is.
    access_key_id: str | None = None


AwsHook = Callable[[AwsRequest], None]


class AwsCallLog:
    """WSGI middleware: records every AWS call the server receives, as ``service:operation`` for
    JSON-protocol APIs (DynamoDB, KMS, ...) and ``s3:<METHOD>`` otherwise, so benchmarks and tests
    can count what a request costs in AWS calls; and calls each hook with the request before moto
    answers it (a test's fault: kill the function making the call, say)."""

    def __init__(self, app: Callable[..., Iterable[bytes]]) -> None:
        self._app = app
        self._lock = threading.Lock()
        self._calls: list[str] = []
        self.hooks: list[AwsHook] = []

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        target = environ.get("HTTP_X_AMZ_TARGET", "")
        if target:
            api, _, operation = target.partition(".")
            name = f"{api.split('_')[0].lower()}:{operation}"
        else:
            name = f"s3:{environ.get('REQUEST_METHOD', '')}"
        with self._lock:
            self._calls.append(name)
            hooks = list(self.hooks)
        if hooks:
            query = dict(parse_qsl(environ.get("QUERY_STRING", ""), keep_blank_values=True))
            credential = environ.get("HTTP_AUTHORIZATION", "").partition("Credential=")[2].partition(",")[
                0
            ] or query.get("X-Amz-Credential", "")
            request = AwsRequest(
                name,
                environ.get("REQUEST_METHOD", ""),
                environ.get("PATH_INFO", ""),
                query,
                credential.split("/", 1)[0] or None,
            )
            for hook in hooks:
                hook(request)
        return self._app(environ, start_response)

    def calls(self) -> list[str]:
        with self._lock:
            return list(self._calls)

    def clear(self) -> None:
        with self._lock:
            self._calls.clear()


class MotoServer:
    """A threaded moto server on ``host:port`` (same interface as moto's ``ThreadedMotoServer``)."""

    def __init__(self, ip_address: str, port: int) -> None:
        self._ip_address = ip_address
        self._port = port
        self._server: BaseWSGIServer | None = None
        self.call_log: AwsCallLog | None = None
        self.iam: IamEnforcement | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        untrack_moto_models()
        transactions_back_up_items()
        moto = SerializedDynamoDB(DomainDispatcherApplication(create_backend_app))
        self.iam = IamEnforcement(moto)
        app = self.call_log = AwsCallLog(self.iam)
        self._server = make_server(
            self._ip_address, self._port, app, threaded=True, request_handler=MotoRequestHandler
        )
        self._thread = threading.Thread(target=self._server.serve_forever, name="moto-server", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join()
            self._thread = None
