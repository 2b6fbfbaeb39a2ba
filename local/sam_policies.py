"""Each function's IAM policies as SAM makes them: ``template.yaml`` through the SAM translator.

Run by the SAM virtualenv's Python (``.venv-sam``, where ``sam validate`` gets the translator: its
pins clash with the service's own pydantic, so it cannot live in ``.venv``):
``.venv-sam/bin/python -m local.sam_policies template.yaml`` prints, as JSON, every
``AWS::Serverless::Function``'s role as CloudFormation would create it: ``{"<LogicalId>":
{"policies": {"<PolicyName>": <PolicyDocument>}, "managed": [<arn>, ...]}}``, with intrinsic
functions left in (the local stack resolves them against its own resources). Imports nothing of the
project: only the standard library and ``samtranslator``.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any


class _NoManagedPolicies:
    """SAM looks managed policies named in ``Policies`` up in IAM; the template names none by name."""

    def load(self) -> dict[str, str]:
        return {}


def translate(template_text: str) -> dict[str, Any]:
    """The CloudFormation template SAM makes of ``template_text``."""
    from samtranslator.translator.transform import transform
    from samtranslator.yaml_helper import yaml_parse

    template = yaml_parse(template_text)
    for resource in template["Resources"].values():
        # Local code paths are what `sam package` uploads; the translator only takes S3 locations.
        properties = resource.get("Properties", {})
        for key in ("CodeUri", "DefinitionUri", "ContentUri"):
            if isinstance(properties.get(key), str) and not properties[key].startswith("s3://"):
                properties[key] = "s3://local-code/" + properties[key].strip("/")
    os.environ.setdefault("AWS_DEFAULT_REGION", "eu-west-1")
    translated: dict[str, Any] = transform(template, {}, _NoManagedPolicies())
    return translated


def function_roles(translated: dict[str, Any], template: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every Serverless function's role: its inline policies by name and its managed policy ARNs."""
    resources = translated["Resources"]
    roles = {}
    for logical_id, resource in template["Resources"].items():
        if resource["Type"] != "AWS::Serverless::Function":
            continue
        role = resources[f"{logical_id}Role"]["Properties"]
        roles[logical_id] = {
            "policies": {
                policy["PolicyName"]: policy["PolicyDocument"] for policy in role.get("Policies", [])
            },
            "managed": role.get("ManagedPolicyArns", []),
        }
    return roles


def main() -> None:
    from samtranslator.yaml_helper import yaml_parse

    with open(sys.argv[1]) as source:
        text = source.read()
    json.dump(function_roles(translate(text), yaml_parse(text)), sys.stdout)


if __name__ == "__main__":
    main()
