"""Each function's IAM role in moto, from ``template.yaml`` through the SAM translator, and the
credentials the function runs with (STS AssumeRole, as Lambda assumes the execution role).

The policies are exactly those SAM gives the deployed roles (policy templates expanded, inline
statements kept), with the template's references resolved against the local resources. The managed
policies SAM attaches (CloudWatch Logs, X-Ray) are not created: nothing calls those services locally.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from local.template import ACCOUNT_ID, ROOT, TEMPLATE_PATH, Resolver

SAM_PYTHON = ROOT / ".venv-sam" / "bin" / "python"
CACHE = ROOT / ".local" / "sam-roles"
# Lambda's service principal may assume every execution role SAM creates.
TRUST = {
    "Version": "2012-10-17",
    "Statement": [
        {"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}
    ],
}


def sam_roles(template: Path = TEMPLATE_PATH) -> dict[str, dict[str, Any]]:
    """``{function: {"policies": {name: document}, "managed": [arn]}}`` as the SAM translator makes
    them (``local.sam_policies``, run by the SAM virtualenv), intrinsics unresolved. Cached under
    ``.local/`` by the template's content."""
    text = template.read_bytes()
    digest = hashlib.sha256(text + Path(__file__).with_name("sam_policies.py").read_bytes()).hexdigest()[:16]
    cached = CACHE / f"{digest}.json"
    if cached.exists():
        loaded: dict[str, dict[str, Any]] = json.loads(cached.read_text())
        return loaded
    if not SAM_PYTHON.exists():
        raise RuntimeError(
            f"{SAM_PYTHON.relative_to(ROOT)} is missing: the local stack turns template.yaml into the "
            "functions' roles with the SAM translator installed there (make .venv-sam/.installed)"
        )
    done = subprocess.run(
        [str(SAM_PYTHON), "-m", "local.sam_policies", str(template)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "AWS_DEFAULT_REGION": "eu-west-1", "PYTHONPATH": str(ROOT)},
    )
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        raise RuntimeError("the SAM translator refused template.yaml (see above)")
    CACHE.mkdir(parents=True, exist_ok=True)
    cached.write_text(done.stdout)
    roles: dict[str, dict[str, Any]] = json.loads(done.stdout)
    return roles


@dataclass(frozen=True)
class RoleCredentials:
    """A function's role and the temporary credentials Lambda would give it."""

    role_arn: str
    access_key_id: str
    secret_access_key: str
    session_token: str

    def environment(self) -> dict[str, str]:
        return {
            "AWS_ACCESS_KEY_ID": self.access_key_id,
            "AWS_SECRET_ACCESS_KEY": self.secret_access_key,
            "AWS_SESSION_TOKEN": self.session_token,
        }


def role_name(function: str) -> str:
    return f"local-{function}Role"


def create_roles(
    roles: dict[str, dict[str, Any]], resolver: Resolver, iam: Any, sts: Any
) -> dict[str, RoleCredentials]:
    """Create each function's role with its inline policies (resolved), assume it as the function,
    and return the credentials by function."""
    credentials = {}
    for function, role in roles.items():
        name = role_name(function)
        arn = iam.create_role(RoleName=name, AssumeRolePolicyDocument=json.dumps(TRUST))["Role"]["Arn"]
        for policy_name, document in role["policies"].items():
            # IAM takes a document without Version as 2008-10-17; moto refuses it. The statements
            # use nothing the two versions read differently (no policy variables).
            resolved = {"Version": "2012-10-17", **resolver.resolve(document)}
            iam.put_role_policy(RoleName=name, PolicyName=policy_name, PolicyDocument=json.dumps(resolved))
        # Lambda names the session after the function; 12 h outlasts a test run or a day of make dev.
        assumed = sts.assume_role(RoleArn=arn, RoleSessionName=f"local-{function}", DurationSeconds=43_200)
        issued = assumed["Credentials"]
        credentials[function] = RoleCredentials(
            arn, issued["AccessKeyId"], issued["SecretAccessKey"], issued["SessionToken"]
        )
    return credentials


def role_policies(iam: Any, function: str) -> list[dict[str, Any]]:
    """The policy documents of ``function``'s role as stored in moto."""
    name = role_name(function)
    return [
        iam.get_role_policy(RoleName=name, PolicyName=policy)["PolicyDocument"]
        for policy in iam.list_role_policies(RoleName=name)["PolicyNames"]
    ]


__all__ = ["ACCOUNT_ID", "RoleCredentials", "create_roles", "role_name", "role_policies", "sam_roles"]
