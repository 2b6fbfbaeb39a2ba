"""Reading ``template.yaml``: resources, routes, and intrinsic functions resolved against the
physical resources the local stack created. One template drives both AWS and the local stack."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE_PATH = ROOT / "template.yaml"
ACCOUNT_ID = "123456789012"
# What ``Ref: AWS::NoValue`` resolves to: the property or entry holding it is left out.
NO_VALUE = object()


@dataclass
class Physical:
    """What a created resource answers to ``Ref`` and ``Fn::GetAtt``."""

    ref: str
    attrs: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Route:
    method: str
    path: str
    function: str
    # The HttpApi the route is on (its logical id): HttpApi, or SiteEventsApi with CORS of its own.
    api: str = "HttpApi"


@dataclass(frozen=True)
class FunctionSpec:
    logical_id: str
    code_dir: Path
    handler: str
    environment: dict[str, Any]
    timeout: int
    memory_size: int = 128


def load_template(path: Path = TEMPLATE_PATH) -> dict[str, Any]:
    """The template as plain dicts, with intrinsic tags as ``{"Ref": ...}``/``{"Fn::...": ...}``."""
    from cfnlint.decode import cfn_yaml  # imported here: the functions' workers import this module

    loaded: dict[str, Any] = cfn_yaml.load(str(path))
    return loaded


def resources_of_type(template: dict[str, Any], *types: str) -> dict[str, dict[str, Any]]:
    return {k: v for k, v in template["Resources"].items() if v["Type"] in types}


def functions(template: dict[str, Any]) -> dict[str, FunctionSpec]:
    """Every Serverless function, with Globals merged in as SAM does."""
    glob = template.get("Globals", {}).get("Function", {})
    specs = {}
    for logical_id, res in resources_of_type(template, "AWS::Serverless::Function").items():
        props = res["Properties"]
        env = {
            **glob.get("Environment", {}).get("Variables", {}),
            **props.get("Environment", {}).get("Variables", {}),
        }
        specs[logical_id] = FunctionSpec(
            logical_id=str(logical_id),
            code_dir=ROOT / str(props["CodeUri"]),
            handler=str(props.get("Handler", glob.get("Handler", "handler.lambda_handler"))),
            environment=env,
            timeout=int(props.get("Timeout", glob.get("Timeout", 3))),
            memory_size=int(props.get("MemorySize", glob.get("MemorySize", 128))),
        )
    return specs


def routes(template: dict[str, Any]) -> list[Route]:
    """Every HttpApi event route, as API Gateway would register it."""
    found = []
    for logical_id, res in resources_of_type(template, "AWS::Serverless::Function").items():
        for event in res["Properties"].get("Events", {}).values():
            if event["Type"] == "HttpApi":
                props = event["Properties"]
                api = props.get("ApiId", {}).get("Ref", "HttpApi")
                found.append(Route(props["Method"].upper(), props["Path"], logical_id, api))
    return found


class Resolver:
    """Evaluates the intrinsic functions the template uses, for the local stack."""

    def __init__(
        self,
        template: dict[str, Any],
        physical: dict[str, Physical],
        parameters: dict[str, str] | None = None,
        region: str = "eu-west-1",
    ) -> None:
        self.template = template
        self.physical = physical
        self.region = region
        self.parameters = {
            name: str(spec.get("Default", "")) for name, spec in template.get("Parameters", {}).items()
        }
        self.parameters.update(parameters or {})

    def pseudo(self, name: str) -> str:
        return {
            "AWS::Region": self.region,
            "AWS::AccountId": ACCOUNT_ID,
            "AWS::Partition": "aws",
            "AWS::URLSuffix": "amazonaws.com",
            "AWS::StackName": "local",
        }[name]

    def ref(self, name: str) -> Any:
        if name == "AWS::NoValue":
            return NO_VALUE
        if name.startswith("AWS::"):
            return self.pseudo(name)
        if name in self.parameters:
            return self.parameters[name]
        return self.physical[name].ref

    def get_att(self, name: str, attr: str) -> str:
        return self.physical[name].attrs[attr]

    def condition(self, name: str) -> bool:
        return bool(self.resolve(self.template["Conditions"][name]))

    def resolve(self, value: Any) -> Any:
        """``value`` with every intrinsic function evaluated; an entry that resolves to
        ``AWS::NoValue`` is left out, as CloudFormation leaves it out."""
        if isinstance(value, list):
            return [v for v in (self.resolve(v) for v in value) if v is not NO_VALUE]
        if not isinstance(value, dict):
            return value
        if len(value) == 1:
            ((key, arg),) = value.items()
            if key == "Ref":
                return self.ref(arg)
            if key == "Fn::GetAtt":
                name, attr = arg if isinstance(arg, list) else arg.split(".", 1)
                return self.get_att(name, attr)
            if key == "Fn::Sub":
                return self._sub(arg)
            if key == "Fn::Equals":
                left, right = self.resolve(arg)
                return left == right
            if key == "Fn::Not":
                (inner,) = arg
                return not self.resolve(inner)
            if key == "Fn::If":
                cond, yes, no = arg
                return self.resolve(yes if self.condition(cond) else no)
            if key == "Fn::FindInMap":
                mapping, top, second = self.resolve(arg)
                return self.template["Mappings"][mapping][top][second]
            if key == "Fn::Join":
                sep, parts = arg
                return sep.join(str(p) for p in self.resolve(parts))
        resolved = {k: self.resolve(v) for k, v in value.items()}
        return {k: v for k, v in resolved.items() if v is not NO_VALUE}

    def _sub(self, arg: str | list[Any]) -> str:
        text, variables = (arg, {}) if isinstance(arg, str) else (arg[0], self.resolve(arg[1]))

        def replace(match: re.Match[str]) -> str:
            name = match.group(1)
            if name in variables:
                return str(variables[name])
            if "." in name and not name.startswith("AWS::"):
                res, attr = name.split(".", 1)
                return self.get_att(res, attr)
            return self.ref(name)

        return re.sub(r"\$\{([^}!]+)\}", replace, text)


@dataclass(frozen=True)
class Throttle:
    """An API Gateway throttle: a token bucket of ``burst`` tokens refilled at ``rate`` a second."""

    rate: float
    burst: int


def route_throttles(template: dict[str, Any], resolver: Resolver) -> dict[str, dict[str, Throttle]]:
    """Each HttpApi's throttles, by route key (``"POST /client/predict/{modelName}"``), with the
    stage's ``DefaultRouteSettings`` under ``"$default"``: what API Gateway holds each route to."""
    found: dict[str, dict[str, Throttle]] = {}
    for logical_id, res in resources_of_type(template, "AWS::Serverless::HttpApi").items():
        props = res.get("Properties", {})
        throttles: dict[str, Throttle] = {}
        for key, settings in [
            ("$default", resolver.resolve(props.get("DefaultRouteSettings", {}))),
            *resolver.resolve(props.get("RouteSettings", {})).items(),
        ]:
            if "ThrottlingRateLimit" in settings or "ThrottlingBurstLimit" in settings:
                throttles[str(key)] = Throttle(
                    float(settings.get("ThrottlingRateLimit", 10_000)),
                    int(settings.get("ThrottlingBurstLimit", 5_000)),
                )
        found[str(logical_id)] = throttles
    return found


def reserved_concurrency(template: dict[str, Any], resolver: Resolver) -> dict[str, int]:
    """Each function's ``ReservedConcurrentExecutions``, where the template sets one."""
    found = {}
    for logical_id, res in resources_of_type(template, "AWS::Serverless::Function").items():
        props = res["Properties"]
        if "ReservedConcurrentExecutions" in props:
            value = resolver.resolve(props["ReservedConcurrentExecutions"])
            if value is not NO_VALUE:
                found[str(logical_id)] = int(value)
    return found
