"""Start and stop the whole local stack; used by ``make dev`` and by the integration tests."""

from __future__ import annotations

import logging
import os
import socket
from dataclasses import dataclass, field
from typing import Any

from local.gateway import LocalGateway
from local.moto_server import MotoServer
from local.provision import Provisioner
from local.template import Physical, functions, load_template, routes

REGION = "eu-west-1"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class LocalStack:
    """moto server + resources from the template + the local gateway, in this process."""

    moto_port: int = 0
    gateway_port: int = 0
    host: str = "127.0.0.1"
    extra_env: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.moto_port = self.moto_port or free_port()
        self.moto_url = f"http://{self.host}:{self.moto_port}"
        self.api_url = ""
        self.physical: dict[str, Physical] = {}
        self.env: dict[str, str] = {}
        self._moto: MotoServer | None = None
        self.gateway: LocalGateway | None = None

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
        template = load_template()
        provisioner = Provisioner(template, self.moto_url, REGION)
        self.physical = provisioner.provision()
        specs = functions(template)
        self.env = self._function_environment(provisioner, specs)
        os.environ.update(self.env)
        from shared import wiring

        wiring.reset()
        self.gateway = LocalGateway(routes(template), specs)
        self.api_url = self.gateway.start(self.host, self.gateway_port)
        return self

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
                "JWKS_URL": f"{self.moto_url}/{pool_id}/.well-known/jwks.json",
                "POWERTOOLS_TRACE_DISABLED": "true",
                "POWERTOOLS_METRICS_DISABLED": "true",
                "POWERTOOLS_LOG_LEVEL": os.environ.get("POWERTOOLS_LOG_LEVEL", "WARNING"),
                **self.extra_env,
            }
        )
        return merged

    def client(self, service: str) -> Any:
        import boto3

        return boto3.client(service, region_name=REGION, endpoint_url=self.moto_url)

    def stop(self) -> None:
        if self.gateway is not None:
            self.gateway.stop()
        if self._moto is not None:
            self._moto.stop()

    def __enter__(self) -> LocalStack:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
