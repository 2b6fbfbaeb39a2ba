"""Start and stop the whole local stack; used by ``make dev`` and by the integration tests."""

from __future__ import annotations

import json
import logging
import os
import socket
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx

from local.dashboard import DashboardServer
from local.gateway import Cors, LocalGateway, RouteThrottles
from local.iam import Caller, Denial
from local.moto_server import AwsHook, MotoServer
from local.provision import Provisioner
from local.roles import RoleCredentials, create_roles, role_policies, sam_roles
from local.runner import FunctionRunner
from local.statemachine import dispatch_lambda_tasks, execute_state_machines
from local.template import (
    FunctionSpec,
    Physical,
    functions,
    load_template,
    reserved_concurrency,
    route_throttles,
    routes,
)
from payments_sandbox import PaymentsSandboxConfig, PaymentsSandboxServer
from platform_sandbox import SandboxConfig, SandboxServer

REGION = "eu-west-1"
# The variables Lambda sets for each function, not the service's own (this process keeps its own
# credentials: it is the administrator, not one of the roles).
RUNTIME_VARIABLES = frozenset(
    {
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_LAMBDA_FUNCTION_NAME",
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE",
        "AWS_LAMBDA_FUNCTION_VERSION",
        "AWS_LAMBDA_LOG_GROUP_NAME",
        "TZ",
        "PATH",
        "LANG",
    }
)
# What the service's webhook endpoint receives from connected accounts (README, "Card payments").
PAYMENTS_WEBHOOK_EVENTS = (
    "checkout.session.completed",
    "checkout.session.async_payment_succeeded",
    "checkout.session.async_payment_failed",
    "checkout.session.expired",
    "payment_intent.payment_failed",
    "account.updated",
    "charge.refunded",
    "charge.dispute.created",
    "charge.dispute.updated",
    "charge.dispute.closed",
    "charge.dispute.funds_withdrawn",
    "charge.dispute.funds_reinstated",
)


def ports_in_use(host: str, ports: Mapping[str, int]) -> dict[str, int]:
    """Those of ``ports`` (a name for each, e.g. its command-line flag) that a program already listens
    on at ``host``. A port left in TIME_WAIT by a stopped stack is free: the probe binds as the servers
    do, with ``SO_REUSEADDR``, so only a listener refuses it."""
    busy = {}
    for name, port in ports.items():
        with socket.socket() as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                sock.bind((host, port))
            except OSError:
                busy[name] = port
    return busy


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class LocalStack:
    """moto server + resources from the template + the platform and payments sandboxes + the local
    gateway in this process; each function in worker processes of its own (``local.runner``)."""

    moto_port: int = 0
    gateway_port: int = 0
    host: str = "127.0.0.1"
    sandbox_port: int = 0
    # The dashboard's origin: the platform sends the browser back to its connect-callback.html.
    dashboard_port: int = 0
    extra_env: dict[str, str] = field(default_factory=dict)
    sandbox_config: SandboxConfig = field(default_factory=SandboxConfig)
    payments_port: int = 0
    payments_config: PaymentsSandboxConfig = field(default_factory=PaymentsSandboxConfig)
    # Each function's AWS calls held to its role from the template (``local.iam``).
    enforce_iam: bool = True

    def __post_init__(self) -> None:
        self.moto_port = self.moto_port or free_port()
        self.moto_url = f"http://{self.host}:{self.moto_port}"
        self.api_url = ""
        self.dashboard_port = self.dashboard_port or free_port()
        self.dashboard_url = f"http://{self.host}:{self.dashboard_port}"
        self.physical: dict[str, Physical] = {}
        self.env: dict[str, str] = {}
        self._moto: MotoServer | None = None
        self.gateway: LocalGateway | None = None
        self.runner: FunctionRunner | None = None
        self.roles: dict[str, RoleCredentials] = {}
        self._function_env: dict[str, dict[str, str]] = {}
        self.dashboard: DashboardServer | None = None
        self.sandbox: SandboxServer
        self.payments: PaymentsSandboxServer

    def start(self) -> LocalStack:
        """Start moto, create the template's resources, configure the environment, serve the API."""
        # moto's werkzeug server logs every AWS call; only problems are worth showing.
        logging.getLogger("werkzeug").setLevel(logging.WARNING)
        self._moto = MotoServer(self.host, self.moto_port)
        self._moto.start()
        for key, value in {
            "AWS_ACCESS_KEY_ID": "local",
            "AWS_SECRET_ACCESS_KEY": "local",
            "AWS_REGION": REGION,
            "AWS_DEFAULT_REGION": REGION,
            "AWS_ENDPOINT_URL": self.moto_url,
        }.items():
            os.environ[key] = value
        execute_state_machines()
        template = load_template()
        provisioner = Provisioner(template, self.moto_url, REGION)
        self.physical = provisioner.provision()
        self.sandbox = SandboxServer(self.sandbox_config, host=self.host)
        self.sandbox.start(self.sandbox_port)
        self._store_platform_secret()
        self.payments = PaymentsSandboxServer(self.payments_config, host=self.host)
        self.payments.start(self.payments_port)
        # The dashboard's address reaches the payments functions from the CloudFront distribution,
        # which the local stack does not create: its own dashboard server stands in.
        self.physical["DashboardDistribution"] = Physical(
            ref="local-dashboard", attrs={"DomainName": f"{self.host}:{self.dashboard_port}"}
        )
        specs = functions(template)
        self.roles = create_roles(sam_roles(), provisioner.resolver, self.client("iam"), self.client("sts"))
        self._enforce(template, provisioner)
        self._function_env = {
            name: {
                **self._function_environment(provisioner, spec),
                **self.roles[name].environment(),
            }
            for name, spec in specs.items()
        }
        self.runner = FunctionRunner(
            specs,
            self._function_env.__getitem__,
            {name: self.physical[name].ref for name in specs},
            reserved=reserved_concurrency(template, provisioner.resolver),
        )
        # The API answers the dashboard's origin only, as the deployed HttpApi's CorsConfiguration does.
        cors = template["Resources"]["HttpApi"]["Properties"]["CorsConfiguration"]
        self.gateway = LocalGateway(
            routes(template),
            self.runner,
            cors=Cors([self.dashboard_url], cors["AllowMethods"], cors["AllowHeaders"]),
            throttles=RouteThrottles(route_throttles(template, provisioner.resolver)),
        )
        self.api_url = self.gateway.start(self.host, self.gateway_port)
        # SiteEventsApi's routes are served by the same local gateway (without HttpApi's CORS): the
        # snippet the Events page shows posts there.
        for environment in self._function_env.values():
            if "SITE_EVENTS_URL" in environment:
                environment["SITE_EVENTS_URL"] = f"{self.api_url}/site-events"
        self.dashboard = DashboardServer(
            {
                "apiUrl": self.api_url,
                "region": REGION,
                "userPoolId": self.physical["UserPool"].ref,
                "userPoolClientId": self.physical["UserPoolClient"].ref,
                # moto answers Cognito's JSON protocol at its root, as cognito-idp.<region>.amazonaws.com
                "cognitoEndpoint": f"{self.moto_url}/",
            },
            # The API, and moto as the user pool and the upload bucket's presigned forms.
            connect_to=[self.api_url, self.moto_url],
        )
        self.dashboard.start(self.host, self.dashboard_port)
        self._store_payments_secret()
        self._bucket_cors(template)
        dispatch_lambda_tasks(self.runner.invoke, {self.physical[name].ref: name for name in specs})
        # This process (tests, seeding, make dev's scheduler) reads and writes AWS directly with the
        # stack's names: the variables every function shares.
        self.env = self._shared_environment()
        os.environ.update(self.env)
        from shared import wiring

        wiring.reset()
        return self

    def _enforce(self, template: dict[str, Any], provisioner: Provisioner) -> None:
        """Hold every function's calls to its role, with the keys S3 and Secrets Manager use on the
        caller's behalf."""
        assert self._moto is not None
        assert self._moto.iam is not None
        iam = self.client("iam")
        for function, credentials in self.roles.items():
            documents = tuple(json.dumps(document) for document in role_policies(iam, function))
            self._moto.iam.register(
                credentials.access_key_id, Caller(function, credentials.role_arn, documents)
            )
        keys = self._moto.iam.keys
        for logical_id, resource in template["Resources"].items():
            if resource["Type"] not in ("AWS::S3::Bucket", "AWS::SecretsManager::Secret"):
                continue
            # CORS names the CloudFront distribution, which the local stack does not create.
            properties = provisioner.resolver.resolve(
                {k: v for k, v in resource.get("Properties", {}).items() if k != "CorsConfiguration"}
            )
            if resource["Type"] == "AWS::S3::Bucket":
                for rule in properties.get("BucketEncryption", {}).get(
                    "ServerSideEncryptionConfiguration", []
                ):
                    default = rule["ServerSideEncryptionByDefault"]
                    if default.get("SSEAlgorithm") == "aws:kms" and default.get("KMSMasterKeyID"):
                        keys.buckets[self.physical[logical_id].ref] = self._key_arn(default["KMSMasterKeyID"])
            if resource["Type"] == "AWS::SecretsManager::Secret" and properties.get("KmsKeyId"):
                keys.secrets[self.physical[logical_id].ref] = self._key_arn(properties["KmsKeyId"])
        self._moto.iam.enforcing = self.enforce_iam

    def _key_arn(self, key: str) -> str:
        return str(self.client("kms").describe_key(KeyId=key)["KeyMetadata"]["Arn"])

    def denied_calls(self) -> list[Denial]:
        """Every AWS call of a function its role refused since start (or ``clear_denied_calls``)."""
        assert self._moto is not None
        assert self._moto.iam is not None
        return self._moto.iam.denials()

    def allowed_calls(self) -> set[tuple[str, str, str]]:
        """Every (function, action, resource) the roles allowed since start: the grants in use."""
        assert self._moto is not None
        assert self._moto.iam is not None
        return self._moto.iam.allowed()

    def clear_denied_calls(self) -> None:
        assert self._moto is not None
        assert self._moto.iam is not None
        self._moto.iam.clear_denials()

    def _bucket_cors(self, template: dict[str, Any]) -> None:
        """Each bucket's CorsRules from the template, with the local dashboard as the allowed origin
        (the deployed rules name the CloudFront distribution's)."""
        for logical_id, resource in template["Resources"].items():
            cors = resource.get("Properties", {}).get("CorsConfiguration")
            if resource["Type"] != "AWS::S3::Bucket" or cors is None:
                continue
            rules = [
                {
                    "AllowedOrigins": [self.dashboard_url],
                    "AllowedMethods": rule["AllowedMethods"],
                    "AllowedHeaders": rule.get("AllowedHeaders", []),
                    "MaxAgeSeconds": rule.get("MaxAge", 0),
                }
                for rule in cors["CorsRules"]
            ]
            self.client("s3").put_bucket_cors(
                Bucket=self.physical[logical_id].ref, CORSConfiguration={"CORSRules": rules}
            )

    def _store_platform_secret(self) -> None:
        """Put the sandbox app's secret into the template's secret, as an operator does after deploy,
        so the functions read it from Secrets Manager exactly as they do in AWS."""
        secrets = self.client("secretsmanager")
        arn = self.physical["PlatformSecrets"].ref
        value = json.loads(secrets.get_secret_value(SecretId=arn)["SecretString"])
        value["app_secret"] = self.sandbox.config.app_secret
        secrets.put_secret_value(SecretId=arn, SecretString=json.dumps(value))

    def _store_payments_secret(self) -> None:
        """What an operator does after deploy (README, "Card payments"): put the provider's secret key
        into the payments secret, register the API's webhook endpoint for connected accounts' events
        through the provider's API, and keep the signing secret it answers with."""
        endpoint = httpx.post(
            f"{self.payments.url}/v1/webhook_endpoints",
            headers={"Authorization": f"Bearer {self.payments.config.secret_key}"},
            data={
                "url": f"{self.api_url}/payments/webhook",
                "connect": "true",
                **{f"enabled_events[{i}]": name for i, name in enumerate(PAYMENTS_WEBHOOK_EVENTS)},
            },
            timeout=10,
        )
        endpoint.raise_for_status()
        secrets = self.client("secretsmanager")
        arn = self.physical["PaymentsSecrets"].ref
        value = json.loads(secrets.get_secret_value(SecretId=arn)["SecretString"])
        value["secret_key"] = self.payments.config.secret_key
        value["webhook_secret"] = endpoint.json()["secret"]
        secrets.put_secret_value(SecretId=arn, SecretString=json.dumps(value))

    def _function_environment(self, provisioner: Provisioner, spec: FunctionSpec) -> dict[str, str]:
        """One function's whole environment, as Lambda gives it: its variables from the template
        (Globals merged), resolved against the local resources, the local endpoints in place of the
        deployed ones, and the runtime's own variables."""
        variables = {
            str(key): str(value) for key, value in provisioner.resolver.resolve(spec.environment).items()
        }
        pool_id = self.physical["UserPool"].ref
        name = self.physical[spec.logical_id].ref
        return {
            **variables,
            "AWS_REGION": REGION,
            "AWS_DEFAULT_REGION": REGION,
            "AWS_ENDPOINT_URL": self.moto_url,
            "AWS_ACCESS_KEY_ID": "local",
            "AWS_SECRET_ACCESS_KEY": "local",
            "AWS_LAMBDA_FUNCTION_NAME": name,
            "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(spec.memory_size),
            "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
            "AWS_LAMBDA_LOG_GROUP_NAME": f"/aws/lambda/{name}",
            "TZ": ":UTC",
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "LANG": "C.UTF-8",
            "STAGE": "local",
            "PLATFORM_GRAPH_URL": self.sandbox.url,
            "PLATFORM_DIALOG_URL": self.sandbox.url,
            "PLATFORM_APP_ID": self.sandbox.config.app_id,
            "PLATFORM_REDIRECT_URI": f"{self.dashboard_url}/connect-callback.html",
            # The card-payment provider's API base (docs/payments-notes.md §8); its key is in the
            # payments secret.
            "PAYMENTS_API_URL": self.payments.url,
            "JWKS_URL": f"{self.moto_url}/{pool_id}/.well-known/jwks.json",
            "POWERTOOLS_TRACE_DISABLED": "true",
            "POWERTOOLS_METRICS_DISABLED": "true",
            "POWERTOOLS_LOG_LEVEL": os.environ.get("POWERTOOLS_LOG_LEVEL", "WARNING"),
            # Payments onboarding comes back to the local dashboard (the template names CloudFront's).
            **({"DASHBOARD_URL": self.dashboard_url} if "DASHBOARD_URL" in variables else {}),
            **self.extra_env,
        }

    def _shared_environment(self) -> dict[str, str]:
        """The variables every function has with the same value (table, bucket, key, secret and
        state machine names, the local endpoints): what this process needs to work on the stack's
        resources as an administrator."""
        shared: dict[str, str] = {}
        for environment in self._function_env.values():
            for key, value in environment.items():
                if key not in RUNTIME_VARIABLES:
                    shared.setdefault(key, value)
        return shared

    def function_environment(self, function: str) -> dict[str, str]:
        """The environment ``function`` runs with (logical id)."""
        return dict(self._function_env[function])

    def aws_calls(self) -> list[str]:
        """Every AWS call the stack's moto server received since start (or ``clear_aws_calls``)."""
        assert self._moto is not None
        assert self._moto.call_log is not None
        return self._moto.call_log.calls()

    @contextmanager
    def aws_hook(self, hook: AwsHook) -> Iterator[None]:
        """Call ``hook`` with every AWS request the stack's moto receives inside the block, before
        moto answers it (a fault a test plants: ``runner.kill_running(function)`` there stands for
        the process dying in the middle of that call)."""
        assert self._moto is not None
        assert self._moto.call_log is not None
        self._moto.call_log.hooks.append(hook)
        try:
            yield
        finally:
            self._moto.call_log.hooks.remove(hook)

    def clear_aws_calls(self) -> None:
        assert self._moto is not None
        assert self._moto.call_log is not None
        self._moto.call_log.clear()

    def client(self, service: str) -> Any:
        """A client on the stack's AWS as this process's administrator."""
        import boto3

        return boto3.client(service, region_name=REGION, endpoint_url=self.moto_url)

    def client_as(self, function: str, service: str, **config: Any) -> Any:
        """A client on the stack's AWS signing as ``function``'s role, with the credentials the
        function runs with: what a repository does inside that function, done here."""
        import boto3
        from botocore.config import Config

        credentials = self.roles[function]
        return boto3.client(
            service,
            region_name=REGION,
            endpoint_url=self.moto_url,
            aws_access_key_id=credentials.access_key_id,
            aws_secret_access_key=credentials.secret_access_key,
            aws_session_token=credentials.session_token,
            config=Config(**config) if config else None,
        )

    def stop(self) -> None:
        if self.runner is not None:
            self.runner.stop()
        if self.dashboard is not None:
            self.dashboard.stop()
        if self.gateway is not None:
            self.gateway.stop()
        if hasattr(self, "sandbox"):
            self.sandbox.stop()
        if hasattr(self, "payments"):
            self.payments.stop()
        if self._moto is not None:
            self._moto.stop()

    def __enter__(self) -> LocalStack:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
