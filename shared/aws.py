"""boto3 clients and DynamoDB tables for the configured region and endpoint.

Built here, cached in ``shared.wiring`` (one of each per container). The clients are typed with the
mypy-boto3 stubs, imported only for type checking: the stubs are a development dependency and the
functions never load them. ``AWS_ENDPOINT_URL`` points every client at moto locally and in tests.
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, overload

import botocore.session
from botocore.client import BaseClient
from botocore.config import Config
from botocore.loaders import Loader

from shared import deadline
from shared.errors import OutOfTime
from shared.settings import Settings

if TYPE_CHECKING:
    from mypy_boto3_cognito_idp import CognitoIdentityProviderClient
    from mypy_boto3_dynamodb import DynamoDBClient, DynamoDBServiceResource
    from mypy_boto3_kms import KMSClient
    from mypy_boto3_s3 import S3Client
    from mypy_boto3_secretsmanager import SecretsManagerClient
    from mypy_boto3_stepfunctions import SFNClient

# The read timeout is a ceiling: inside an invocation each attempt gets at most the time it has left
# (``bound_by_deadline``).
_CONFIG = Config(retries={"mode": "standard", "max_attempts": 3}, connect_timeout=3, read_timeout=10)
# An AWS call with less than this left is not sent (DynamoDB, S3 and KMS answer in milliseconds).
MIN_CALL_SECONDS = 0.25
# S3 signs with Signature Version 4 in every region, presigned links included: S3 refuses a SigV2 link
# to an SSE-KMS object (every object of the service), and botocore's default still presigns with SigV2.
# Links name the bucket's regional host (bucket.s3.<region>.amazonaws.com): the global one answers a
# new bucket's requests with a redirect for up to a day, which a browser's upload does not follow.
# S3 connections kept open: a call that reads or deletes many small objects sends this many at once
# (``shared.repositories.blobs.CONCURRENT_REQUESTS``); botocore keeps 10 by default.
S3_CONNECTIONS = 32
_S3_CONFIG = _CONFIG.merge(
    Config(signature_version="s3v4", s3={"addressing_style": "virtual"}, max_pool_connections=S3_CONNECTIONS)
)
# A custom endpoint (moto locally) is addressed by path: the bucket cannot be its subdomain.
_S3_CUSTOM_ENDPOINT_CONFIG = _CONFIG.merge(
    Config(signature_version="s3v4", s3={"addressing_style": "path"}, max_pool_connections=S3_CONNECTIONS)
)


@overload
def client(
    service: Literal["cognito-idp"], settings: Settings, from_session: botocore.session.Session
) -> CognitoIdentityProviderClient: ...
@overload
def client(
    service: Literal["dynamodb"], settings: Settings, from_session: botocore.session.Session
) -> DynamoDBClient: ...
@overload
def client(
    service: Literal["kms"], settings: Settings, from_session: botocore.session.Session
) -> KMSClient: ...
@overload
def client(
    service: Literal["s3"], settings: Settings, from_session: botocore.session.Session
) -> S3Client: ...
@overload
def client(
    service: Literal["secretsmanager"], settings: Settings, from_session: botocore.session.Session
) -> SecretsManagerClient: ...
@overload
def client(
    service: Literal["stepfunctions"], settings: Settings, from_session: botocore.session.Session
) -> SFNClient: ...
def client(service: str, settings: Settings, from_session: botocore.session.Session) -> BaseClient:
    """A client for ``service`` in the configured region and endpoint, from ``from_session``.

    Built by botocore directly: the same client boto3 would build, without boto3's import of its
    resource and S3-transfer layers (``upload_file`` and friends), which no function uses; that
    import is a large share of a cold start. Credentials come from the usual chain. S3 clients sign
    with SigV4, presigned links included.
    """
    config = _config(service, settings)
    built: BaseClient = from_session.create_client(
        service, region_name=settings.aws_region, endpoint_url=settings.aws_endpoint_url, config=config
    )
    bound_by_deadline(built, config)
    return built


def bound_by_deadline(built: BaseClient, config: Config) -> None:
    """Hold every attempt of ``built``'s calls (retries included) to the invocation's time: its read
    timeout is ``config``'s or the time left (``shared.deadline``), whichever is shorter, and an
    attempt with less than ``MIN_CALL_SECONDS`` left is not sent but raised as ``OutOfTime``."""
    handler = functools.partial(_bound_attempt, ceiling=float(config.read_timeout))
    # First, so that nothing answers an attempt the budget refuses (moto's in-process stub included).
    built.meta.events.register_first("before-send", handler, unique_id="deadline-read-timeout")


def _bound_attempt(request: Any, ceiling: float, **_: Any) -> None:
    if deadline.seconds_left() is None:
        return
    timeout = deadline.call_timeout(ceiling)
    if timeout < MIN_CALL_SECONDS:
        raise OutOfTime(
            "The request ran out of time before the service's storage answered.",
            remedy="Retry after the time in Retry-After.",
        )
    # botocore reads a per-request read timeout from the request's context (httpsession).
    request.context["read_timeout"] = timeout


def _config(service: str, settings: Settings) -> Config:
    if service != "s3":
        return _CONFIG
    return _S3_CONFIG if settings.aws_endpoint_url is None else _S3_CUSTOM_ENDPOINT_CONFIG


# The services this code builds clients for (``client``'s overloads), and those botocore's credential
# providers may build one for (assumed roles, SSO) outside Lambda.
SERVICES: tuple[str, ...] = (
    "cognito-idp",
    "dynamodb",
    "kms",
    "s3",
    "secretsmanager",
    "stepfunctions",
    "sts",
    "sso",
    "sso-oidc",
)


class KnownServicesLoader(Loader):
    """botocore's data loader, told which services exist instead of listing every one of them.

    Before loading a service's model, botocore checks the name against every service it ships: it
    lists its data directory and looks into each of ~420 services' version folders (about 2,700
    ``stat`` calls, twice per first client: the model and the endpoint rules), a fifth of a cold
    first client. This loader looks only at ``SERVICES`` and answers the same for them; a client for
    any other service fails with botocore's ``UnknownServiceError`` naming the known ones.
    """

    def list_available_services(self, type_name: str) -> list[str]:
        """The services of ``SERVICES`` having a ``type_name`` file (e.g. ``service-2``), sorted."""
        found: set[str] = set()
        for base in self.search_paths:
            for service in SERVICES:
                directory = os.path.join(base, service)
                if service in found or not os.path.isdir(directory):
                    continue
                if any(
                    self.file_loader.exists(os.path.join(directory, version, type_name))
                    for version in os.listdir(directory)
                ):
                    found.add(service)
        return sorted(found)


def session() -> botocore.session.Session:
    """A botocore session (credentials chain, loaded service data); ``shared.wiring`` keeps one.

    Its data loader is a :class:`KnownServicesLoader` on the same search path as botocore's own
    (``AWS_DATA_PATH`` first, then the models botocore ships).
    """
    built = botocore.session.get_session()
    data_path = built.get_config_variable("data_path")
    extra = (
        [os.path.expanduser(os.path.expandvars(path)) for path in data_path.split(os.pathsep)]
        if data_path
        else None
    )
    built.register_component("data_loader", KnownServicesLoader(extra_search_paths=extra))
    return built


def dynamodb_resource(settings: Settings) -> DynamoDBServiceResource:
    """The DynamoDB resource, for ``Table`` objects (functions that query; predict does not), safe
    to share between threads (see ``PerThreadConditionBuilder``)."""
    import boto3
    from boto3.dynamodb.conditions import ConditionExpressionBuilder
    from boto3.dynamodb.transform import TransformationInjector

    resource: DynamoDBServiceResource = boto3.resource(
        "dynamodb", region_name=settings.aws_region, endpoint_url=settings.aws_endpoint_url, config=_CONFIG
    )
    bound_by_deadline(resource.meta.client, _CONFIG)
    # The resource builds every call's expressions with one builder; swap in one whose counters are
    # per thread. It must still run before the values are serialized, so it goes first.
    events = resource.meta.client.meta.events
    events.unregister("before-parameter-build.dynamodb", unique_id=_CONDITION_HANDLER)
    injector = TransformationInjector(condition_builder=PerThreadConditionBuilder(ConditionExpressionBuilder))
    events.register_first(
        "before-parameter-build.dynamodb", injector.inject_condition_expressions, unique_id=_CONDITION_HANDLER
    )
    return resource


_CONDITION_HANDLER = "dynamodb-condition-expression"  # boto3.dynamodb.transform's own unique_id


class PerThreadConditionBuilder:
    """boto3's condition builder, one per thread.

    boto3 numbers the placeholders of a call's expressions (``#n0``, ``:v0``, ...) with two counters
    on its builder, resets them at the start of each call, and gives a resource one builder for every
    call through it. Two threads building at once renumber each other's placeholders: a query for
    ``pk = :v0 AND begins_with(sk, :v1)`` goes out with ``#n0`` naming ``sk`` and DynamoDB refuses it,
    "Query condition missed key schema element: pk" (boto/boto3#1332; seen in the local stack, which
    runs concurrent invocations in one process). Each thread now builds with its own. In: ``make``,
    the builder class (imported by the caller, so the predict path never loads boto3).
    """

    def __init__(self, make: Callable[[], Any]) -> None:
        self._make = make
        self._threads = threading.local()

    def _own(self) -> Any:
        builder = getattr(self._threads, "builder", None)
        if builder is None:
            builder = self._threads.builder = self._make()
        return builder

    def reset(self) -> None:
        self._own().reset()

    def build_expression(self, condition: Any, is_key_condition: bool = False) -> Any:
        return self._own().build_expression(condition, is_key_condition=is_key_condition)
