"""Start and stop the whole local stack; used by ``make dev`` and by the integration tests."""

from __future__ import annotations

import json
import logging
import os
import socket
from dataclasses import dataclass, field
from typing import Any

from local.dashboard import DashboardServer
from local.gateway import Cors, LocalGateway
from local.moto_server import MotoServer
from local.provision import Provisioner
from local.statemachine import dispatch_lambda_tasks, execute_state_machines
from local.template import Physical, functions, load_template, routes
from payments_sandbox import PaymentsSandboxConfig, PaymentsSandboxServer
from platform_sandbox import SandboxConfig, SandboxServer

REGION = "eu-west-1"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class LocalStack:
    """moto server + resources from the template + the platform and payments sandboxes + the local
    gateway, all in this process."""

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
        specs = functions(template)
        # The API answers the dashboard's origin only, as the deployed HttpApi's CorsConfiguration does.
        cors = template["Resources"]["HttpApi"]["Properties"]["CorsConfiguration"]
        self.gateway = LocalGateway(
            routes(template),
            specs,
            cors=Cors([self.dashboard_url], cors["AllowMethods"], cors["AllowHeaders"]),
        )
        self.api_url = self.gateway.start(self.host, self.gateway_port)
        self.dashboard = DashboardServer(
            {
                "apiUrl": self.api_url,
                "region": REGION,
                "userPoolId": self.physical["UserPool"].ref,
                "userPoolClientId": self.physical["UserPoolClient"].ref,
                # moto answers Cognito's JSON protocol at its root, as cognito-idp.<region>.amazonaws.com
                "cognitoEndpoint": f"{self.moto_url}/",
            }
        )
        self.dashboard.start(self.host, self.dashboard_port)
        self._bucket_cors(template)
        dispatch_lambda_tasks(
            self.gateway.invoke,
            {self.physical[name].ref: name for name in specs},
            {name: spec.timeout for name, spec in specs.items()},
        )
        self.env = self._function_environment(provisioner, specs)
        os.environ.update(self.env)
        from shared import wiring

        wiring.reset()
        return self

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

    def _function_environment(self, provisioner: Provisioner, specs: dict[str, Any]) -> dict[str, str]:
        """The functions' environment, resolved against the local resources.

        All functions share one process, so their variables must agree; they do, because they all
        come from Globals plus function-specific additions (checked here).
        """
        merged: dict[str, str] = {}
        for spec in specs.values():
            for key, value in provisioner.resolver.resolve(spec.environment).items():
                if key in merged and merged[key] != str(value):
                    raise ValueError(f"functions disagree on {key}; the local stack runs them in one process")
                merged[key] = str(value)
        pool_id = self.physical["UserPool"].ref
        merged.update(
            {
                "STAGE": "local",
                "PLATFORM_GRAPH_URL": self.sandbox.url,
                "PLATFORM_DIALOG_URL": self.sandbox.url,
                "PLATFORM_APP_ID": self.sandbox.config.app_id,
                "PLATFORM_REDIRECT_URI": f"{self.dashboard_url}/connect-callback.html",
                # The card-payment provider's API base and the platform's key (docs/payments-notes.md §8).
                "PAYMENTS_API_URL": self.payments.url,
                "PAYMENTS_SECRET_KEY": self.payments.config.secret_key,
                "JWKS_URL": f"{self.moto_url}/{pool_id}/.well-known/jwks.json",
                "POWERTOOLS_TRACE_DISABLED": "true",
                "POWERTOOLS_METRICS_DISABLED": "true",
                "POWERTOOLS_LOG_LEVEL": os.environ.get("POWERTOOLS_LOG_LEVEL", "WARNING"),
                **self.extra_env,
            }
        )
        return merged

    def aws_calls(self) -> list[str]:
        """Every AWS call the stack's moto server received since start (or ``clear_aws_calls``)."""
        assert self._moto is not None
        assert self._moto.call_log is not None
        return self._moto.call_log.calls()

    def clear_aws_calls(self) -> None:
        assert self._moto is not None
        assert self._moto.call_log is not None
        self._moto.call_log.clear()

    def client(self, service: str) -> Any:
        import boto3

        return boto3.client(service, region_name=REGION, endpoint_url=self.moto_url)

    def stop(self) -> None:
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
