"""Publish the dashboard to a deployed stack: upload ``dashboard/`` and a ``config.json`` generated
from the stack's outputs to its private bucket, then invalidate the CloudFront cache.

    python -m scripts.deploy_dashboard --stack prediction-service-dev [--region eu-west-1]

Pages, scripts and ``config.json`` are revalidated on every load (``no-cache``), so a deploy is seen
at once; nothing in ``dashboard/`` is fingerprinted, and the whole folder is a few tens of kilobytes.
"""

from __future__ import annotations

import argparse
import json
import mimetypes
import time
from pathlib import Path
from typing import Any

import boto3

ROOT = Path(__file__).resolve().parent.parent
DASHBOARD = ROOT / "dashboard"
CONTENT_TYPES = {
    ".js": "text/javascript",
    ".css": "text/css",
    ".html": "text/html",
    ".json": "application/json",
    ".svg": "image/svg+xml",  # the pages' icon (favicon.svg), whatever the machine's MIME table says
}


def dashboard_config(outputs: dict[str, str], region: str) -> dict[str, str]:
    """What the pages read from ``config.json``: where the API and the user pool are."""
    return {
        "apiUrl": outputs["ApiUrl"],
        "region": region,
        "userPoolId": outputs["UserPoolId"],
        "userPoolClientId": outputs["UserPoolClientId"],
        "cognitoEndpoint": f"https://cognito-idp.{region}.amazonaws.com/",
    }


def stack_outputs(cloudformation: Any, stack: str) -> dict[str, str]:
    described = cloudformation.describe_stacks(StackName=stack)["Stacks"][0]
    return {o["OutputKey"]: o["OutputValue"] for o in described.get("Outputs", [])}


def publish(s3: Any, bucket: str, config: dict[str, str], source: Path = DASHBOARD) -> list[str]:
    """Upload every file of ``source`` and ``config.json``; returns the keys written."""
    written = []
    for path in sorted(p for p in source.rglob("*") if p.is_file()):
        key = path.relative_to(source).as_posix()
        content_type = CONTENT_TYPES.get(path.suffix) or mimetypes.guess_type(path.name)[0]
        s3.put_object(
            Bucket=bucket,
            Key=key,
            Body=path.read_bytes(),
            ContentType=content_type or "application/octet-stream",
            CacheControl="no-cache",
        )
        written.append(key)
    s3.put_object(
        Bucket=bucket,
        Key="config.json",
        Body=json.dumps(config, indent=2).encode(),
        ContentType="application/json",
        CacheControl="no-cache",
    )
    return [*written, "config.json"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stack", required=True, help="the CloudFormation stack name")
    parser.add_argument("--region", default="eu-west-1")
    args = parser.parse_args()
    session = boto3.session.Session(region_name=args.region)
    outputs = stack_outputs(session.client("cloudformation"), args.stack)
    keys = publish(
        session.client("s3"), outputs["DashboardBucketName"], dashboard_config(outputs, args.region)
    )
    session.client("cloudfront").create_invalidation(
        DistributionId=outputs["DashboardDistributionId"],
        InvalidationBatch={"Paths": {"Quantity": 1, "Items": ["/*"]}, "CallerReference": str(time.time_ns())},
    )
    print(f"Published {len(keys)} files; the dashboard is at {outputs['DashboardUrl']}")


if __name__ == "__main__":
    main()
