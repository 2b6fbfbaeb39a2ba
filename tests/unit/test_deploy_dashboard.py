"""Publishing the dashboard: every page and the generated config.json land in the bucket."""

from __future__ import annotations

import json

import boto3
from moto import mock_aws

from scripts.deploy_dashboard import DASHBOARD, dashboard_config, publish

OUTPUTS = {
    "ApiUrl": "https://abc123.execute-api.eu-west-1.amazonaws.com",
    "UserPoolId": "eu-west-1_AbCdEf",
    "UserPoolClientId": "client123",
}


def test_the_config_names_the_api_and_the_user_pool_of_the_stack() -> None:
    assert dashboard_config(OUTPUTS, "eu-west-1") == {
        "apiUrl": "https://abc123.execute-api.eu-west-1.amazonaws.com",
        "region": "eu-west-1",
        "userPoolId": "eu-west-1_AbCdEf",
        "userPoolClientId": "client123",
        "cognitoEndpoint": "https://cognito-idp.eu-west-1.amazonaws.com/",
    }


@mock_aws
def test_publishing_uploads_every_page_with_its_type_and_the_config() -> None:
    # Given
    s3 = boto3.client("s3", region_name="eu-west-1")
    s3.create_bucket(Bucket="dash", CreateBucketConfiguration={"LocationConstraint": "eu-west-1"})
    # When
    keys = publish(s3, "dash", dashboard_config(OUTPUTS, "eu-west-1"))
    # Then
    pages = {p.relative_to(DASHBOARD).as_posix() for p in DASHBOARD.rglob("*") if p.is_file()}
    assert set(keys) == pages | {"config.json"}
    assert {"index.html", "connect-callback.html", "app.js"} <= pages
    script = s3.get_object(Bucket="dash", Key="app.js")
    assert script["ContentType"] == "text/javascript"
    assert script["CacheControl"] == "no-cache"
    # And the pages' icon is served as an image (a page without one showed a 404 in the console)
    assert s3.get_object(Bucket="dash", Key="favicon.svg")["ContentType"] == "image/svg+xml"
    config = json.loads(s3.get_object(Bucket="dash", Key="config.json")["Body"].read())
    assert config["userPoolClientId"] == "client123"
