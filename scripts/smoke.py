"""Smoke test of a deployed stack: the contract's calls, each answered as documented, or what failed
with the CloudWatch log group to read.

    python -m scripts.smoke --stack prediction-service-dev --api-key svc_... --username ann@example.com
    python -m scripts.smoke --url https://abc.execute-api.eu-west-1.amazonaws.com --api-key ... --token ...

(``make smoke STACK=…`` or ``make smoke URL=…``; the key, the user and the password can come from
``SMOKE_API_KEY``, ``SMOKE_USERNAME``, ``SMOKE_PASSWORD``, or a token from ``SMOKE_ID_TOKEN``.)

It creates nothing: it reads the models (``GET /client/models``) and predicts with the first one for
one of its training users, reads the connection's status and the audiences, and asks for a dry run
of Publish advert on the first active audience, which the service validates with the platform and
creates nothing for. With ``--stack`` the API URL, the user pool client and each function's log
group come from the stack; with ``--url`` the log groups are named by the template's logical ids.
``tests/integration/test_smoke.py`` runs it against the local stack in ``make test``, so it keeps
working.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from local.template import load_template, routes

# The smallest valid Publish advert settings; a dry run only plans and validates them.
DRY_RUN_ADVERT: dict[str, Any] = {
    "dryRun": True,
    "campaignName": "Smoke test (dry run)",
    "dailyBudget": 10,
    "headline": "Smoke test",
    "description": "A dry run: nothing is created.",
    "destinationUrl": "https://example.com/",
}


@dataclass(frozen=True)
class Target:
    """Where and as whom to run: the API, an API key, a dashboard user's ID token, and the log
    group of each function (logical id -> group name) to point at when a call fails."""

    api_url: str
    api_key: str
    id_token: str
    log_groups: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Check:
    """One call's outcome: what was called, whether it answered as documented, and where to look."""

    name: str
    route: str
    passed: bool
    detail: str
    log_group: str | None = None
    skipped: bool = False

    def line(self) -> str:
        mark = "SKIP" if self.skipped else ("ok  " if self.passed else "FAIL")
        where = f"\n       logs: {self.log_group}" if not self.passed and self.log_group else ""
        return f"  {mark} {self.name:<28} {self.route:<52} {self.detail}{where}"


def function_of_route() -> dict[str, str]:
    """``"METHOD /path"`` -> the logical id of the function behind it (template.yaml)."""
    return {f"{route.method} {route.path}": route.function for route in routes(load_template())}


def log_group_ids() -> dict[str, str]:
    """Function logical id -> the logical id of its log group (``LoggingConfig.LogGroup``)."""
    groups: dict[str, str] = {}
    for name, resource in load_template()["Resources"].items():
        group = resource.get("Properties", {}).get("LoggingConfig", {}).get("LogGroup")
        if resource["Type"] == "AWS::Serverless::Function" and isinstance(group, dict) and "Ref" in group:
            groups[name] = str(group["Ref"])
    return groups


def template_log_groups() -> dict[str, str]:
    """Function logical id -> how to find its log group when only the URL is known."""
    return {
        function: f"the stack's {group} (make smoke STACK=<name> gives its name)"
        for function, group in log_group_ids().items()
    }


def run_smoke(target: Target, client: httpx.Client | None = None) -> list[Check]:
    """Every check against ``target``, in order; later checks use what earlier ones found."""
    owned = client is None
    http = client or httpx.Client(timeout=35)
    functions = function_of_route()
    api = target.api_url.rstrip("/")
    key = {"X-Service-Api-Key": target.api_key}
    user = {"Authorization": f"Bearer {target.id_token}"}
    checks: list[Check] = []

    def call(
        name: str, method: str, route: str, path: str, headers: dict[str, str], expect: int, **kwargs: Any
    ) -> httpx.Response | None:
        function = functions.get(f"{method} {route}")
        group = target.log_groups.get(function or "", function)
        try:
            answer = http.request(method, f"{api}{path}", headers=headers, **kwargs)
        except httpx.HTTPError as exc:
            checks.append(Check(name, f"{method} {route}", False, f"no answer: {exc!r}", group))
            return None
        passed = answer.status_code == expect
        detail = f"{answer.status_code}" + ("" if passed else f" (expected {expect}): {answer.text[:300]}")
        checks.append(Check(name, f"{method} {route}", passed, detail, group))
        return answer if passed else None

    try:
        models = call("models", "GET", "/client/models", "/client/models", key, 200)
        found = (models.json().get("models") or []) if models else []
        purchase = next((m for m in found if m.get("type") == "purchase"), found[0] if found else None)
        if purchase is None:
            checks.append(
                Check("predict", "POST /client/predict/{modelName}", True, "no model", skipped=True)
            )
        else:
            name = purchase["name"]
            users = call(
                "training users",
                "GET",
                "/client/models/{modelName}/users",
                f"/client/models/{name}/users",
                key,
                200,
                params={"limit": 1},
            )
            user_ids = (users.json().get("user_ids") or []) if users else []
            if user_ids:
                call(
                    "predict",
                    "POST",
                    "/client/predict/{modelName}",
                    f"/client/predict/{name}",
                    key,
                    200,
                    json={"input": {"user_id": user_ids[0]}},
                )
        call("connection status", "GET", "/platform-ads/status", "/platform-ads/status", user, 200)
        audiences = call("audiences", "GET", "/platform-ads/audiences", "/platform-ads/audiences", user, 200)
        listed = (audiences.json().get("audiences") or []) if audiences else []
        active = next((a for a in listed if a.get("status") == "active"), None)
        route = "/platform-ads/audiences/{audienceId}/advert"
        if active is None:
            checks.append(
                Check("dry-run activation", f"POST {route}", True, "no active audience", skipped=True)
            )
        else:
            path = f"/platform-ads/audiences/{active['audienceId']}/advert"
            call("dry-run activation", "POST", route, path, user, 200, json=DRY_RUN_ADVERT)
    finally:
        if owned:
            http.close()
    return checks


def report(checks: list[Check]) -> str:
    """The checks, one a line, and how many passed, were skipped and failed."""
    failed = sum(not c.passed for c in checks)
    skipped = sum(c.skipped for c in checks)
    summary = f"{len(checks) - failed - skipped} passed, {skipped} skipped, {failed} failed"
    return "\n".join(["Smoke test:", *(c.line() for c in checks), summary])


def stack_target(
    stack: str, region: str, api_key: str, token: str | None, user: tuple[str, str] | None
) -> Target:
    """The target of a deployed stack: its outputs, its functions' log groups, a user's token."""
    import boto3

    session = boto3.session.Session(region_name=region)
    cloudformation = session.client("cloudformation")
    described = cloudformation.describe_stacks(StackName=stack)["Stacks"][0]
    outputs = {o["OutputKey"]: o["OutputValue"] for o in described.get("Outputs", [])}
    physical = {
        r["LogicalResourceId"]: r["PhysicalResourceId"]
        for page in cloudformation.get_paginator("list_stack_resources").paginate(StackName=stack)
        for r in page["StackResourceSummaries"]
    }
    groups = {function: physical.get(group, group) for function, group in log_group_ids().items()}
    if token is None:
        if user is None:
            raise SystemExit("Give --token, or --username and --password (a dashboard user).")
        answer = session.client("cognito-idp").initiate_auth(
            ClientId=outputs["UserPoolClientId"],
            AuthFlow="USER_PASSWORD_AUTH",
            AuthParameters={"USERNAME": user[0], "PASSWORD": user[1]},
        )
        token = answer["AuthenticationResult"]["IdToken"]
    return Target(api_url=outputs["ApiUrl"], api_key=api_key, id_token=token, log_groups=groups)


def main(argv: list[str] | None = None, environ: Mapping[str, str] = os.environ) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--stack", help="the deployed stack's name (outputs, log groups)")
    where.add_argument("--url", help="the API's URL")
    parser.add_argument("--region", default=environ.get("AWS_REGION", "eu-west-1"))
    parser.add_argument("--api-key", default=environ.get("SMOKE_API_KEY"))
    parser.add_argument("--token", default=environ.get("SMOKE_ID_TOKEN"), help="a dashboard user's ID token")
    parser.add_argument("--username", default=environ.get("SMOKE_USERNAME"))
    parser.add_argument("--password", default=environ.get("SMOKE_PASSWORD"))
    args = parser.parse_args(argv)
    if not args.api_key:
        parser.error("an API key is needed: --api-key or SMOKE_API_KEY (create one in the dashboard)")
    user = (args.username, args.password) if args.username and args.password else None
    if args.stack:
        target = stack_target(args.stack, args.region, args.api_key, args.token, user)
    else:
        if not args.token:
            parser.error("with --url, a dashboard user's ID token is needed: --token or SMOKE_ID_TOKEN")
        target = Target(
            api_url=args.url, api_key=args.api_key, id_token=args.token, log_groups=template_log_groups()
        )
    checks = run_smoke(target)
    print(report(checks))
    return 0 if all(c.passed for c in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
