"""Create the template's AWS resources in moto, from ``template.yaml`` itself.

Each supported resource type maps its CloudFormation properties onto the boto3 call that creates
it. Physical names follow CloudFormation's ``<stack>-<LogicalId>`` style.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from typing import Any

import boto3

from local.statemachine import create_state_machine, definition
from local.template import ACCOUNT_ID, Physical, Resolver, resources_of_type

STACK = "local"


class Provisioner:
    """Creates resources in dependency order and records their physical ids for ``Resolver``."""

    def __init__(self, template: dict[str, Any], endpoint_url: str, region: str) -> None:
        self.template = template
        self.region = region
        self.physical: dict[str, Physical] = {}
        self.resolver = Resolver(template, self.physical, region=region)
        self._session = boto3.session.Session(
            aws_access_key_id="local", aws_secret_access_key="local", region_name=region
        )
        self._endpoint = endpoint_url

    def _client(self, service: str) -> Any:
        return self._session.client(service, endpoint_url=self._endpoint)

    def provision(self) -> dict[str, Physical]:
        """Create every supported resource; returns logical id -> physical ids."""
        steps: list[tuple[tuple[str, ...], Callable[[str, dict[str, Any]], Physical]]] = [
            (("AWS::KMS::Key",), self._kms_key),
            (("AWS::KMS::Alias",), self._kms_alias),
            (("AWS::DynamoDB::Table",), self._table),
            (("AWS::S3::Bucket",), self._bucket),
            (("AWS::SecretsManager::Secret",), self._secret),
            (("AWS::Cognito::UserPool",), self._user_pool),
            (("AWS::Cognito::UserPoolClient",), self._user_pool_client),
            (("AWS::Serverless::HttpApi",), self._http_api),
            (("AWS::Serverless::Function",), self._function),
            (("AWS::Serverless::StateMachine",), self._state_machine),
        ]
        for types, create in steps:
            for logical_id, res in resources_of_type(self.template, *types).items():
                self.physical[logical_id] = create(logical_id, res.get("Properties", {}))
        return self.physical

    def props(self, properties: dict[str, Any]) -> dict[str, Any]:
        resolved: dict[str, Any] = self.resolver.resolve(properties)
        return resolved

    def _arn(self, service: str, resource: str) -> str:
        return f"arn:aws:{service}:{self.region}:{ACCOUNT_ID}:{resource}"

    def _kms_key(self, logical_id: str, properties: dict[str, Any]) -> Physical:
        props = self.props(properties)
        key = self._client("kms").create_key(Description=props.get("Description", logical_id))["KeyMetadata"]
        return Physical(ref=key["KeyId"], attrs={"Arn": key["Arn"], "KeyId": key["KeyId"]})

    def _kms_alias(self, logical_id: str, properties: dict[str, Any]) -> Physical:
        props = self.props(properties)
        self._client("kms").create_alias(AliasName=props["AliasName"], TargetKeyId=props["TargetKeyId"])
        return Physical(ref=props["AliasName"])

    def _table(self, logical_id: str, properties: dict[str, Any]) -> Physical:
        props = self.props(properties)
        name = f"{STACK}-{logical_id}"
        kwargs: dict[str, Any] = {
            "TableName": name,
            "AttributeDefinitions": props["AttributeDefinitions"],
            "KeySchema": props["KeySchema"],
            "BillingMode": props.get("BillingMode", "PAY_PER_REQUEST"),
        }
        if "GlobalSecondaryIndexes" in props:
            kwargs["GlobalSecondaryIndexes"] = props["GlobalSecondaryIndexes"]
        ddb = self._client("dynamodb")
        table = ddb.create_table(**kwargs)["TableDescription"]
        ttl = props.get("TimeToLiveSpecification")
        if ttl and ttl.get("Enabled"):
            ddb.update_time_to_live(TableName=name, TimeToLiveSpecification=ttl)
        return Physical(ref=name, attrs={"Arn": table["TableArn"]})

    def _bucket(self, logical_id: str, properties: dict[str, Any]) -> Physical:
        # CORS names the deployed dashboard's origin; the local stack applies the rules with its own
        # dashboard's origin once that is known (``LocalStack``).
        props = self.props({k: v for k, v in properties.items() if k != "CorsConfiguration"})
        name = f"{STACK}-{logical_id}".lower()
        s3 = self._client("s3")
        s3.create_bucket(Bucket=name, CreateBucketConfiguration={"LocationConstraint": self.region})
        if "BucketEncryption" in props:
            s3.put_bucket_encryption(
                Bucket=name,
                ServerSideEncryptionConfiguration={
                    # CloudFormation's property name differs from the S3 API's.
                    "Rules": [
                        {
                            "ApplyServerSideEncryptionByDefault": rule["ServerSideEncryptionByDefault"],
                            "BucketKeyEnabled": rule.get("BucketKeyEnabled", False),
                        }
                        for rule in props["BucketEncryption"]["ServerSideEncryptionConfiguration"]
                    ]
                },
            )
        if "PublicAccessBlockConfiguration" in props:
            s3.put_public_access_block(
                Bucket=name, PublicAccessBlockConfiguration=props["PublicAccessBlockConfiguration"]
            )
        if props.get("VersioningConfiguration"):
            s3.put_bucket_versioning(Bucket=name, VersioningConfiguration=props["VersioningConfiguration"])
        return Physical(ref=name, attrs={"Arn": f"arn:aws:s3:::{name}"})

    def _secret(self, logical_id: str, properties: dict[str, Any]) -> Physical:
        props = self.props(properties)
        generate = props.get("GenerateSecretString", {})
        value = json.loads(generate.get("SecretStringTemplate", "{}"))
        if "GenerateStringKey" in generate:
            value[generate["GenerateStringKey"]] = secrets.token_urlsafe(36)
        created = self._client("secretsmanager").create_secret(
            Name=f"{STACK}-{logical_id}", SecretString=json.dumps(value)
        )
        return Physical(ref=created["ARN"], attrs={"Id": created["ARN"]})

    def _user_pool(self, logical_id: str, properties: dict[str, Any]) -> Physical:
        props = self.props(properties)
        kwargs: dict[str, Any] = {"PoolName": f"{STACK}-{logical_id}"}
        for key in (
            "UsernameAttributes",
            "AutoVerifiedAttributes",
            "Policies",
            "MfaConfiguration",
            "AdminCreateUserConfig",
        ):
            if key in props:
                kwargs[key] = props[key]
        pool = self._client("cognito-idp").create_user_pool(**kwargs)["UserPool"]
        return Physical(
            ref=pool["Id"],
            attrs={
                "Arn": pool["Arn"],
                "ProviderURL": f"cognito-idp.{self.region}.amazonaws.com/{pool['Id']}",
            },
        )

    def _user_pool_client(self, logical_id: str, properties: dict[str, Any]) -> Physical:
        props = self.props(properties)
        created = self._client("cognito-idp").create_user_pool_client(
            UserPoolId=props["UserPoolId"],
            ClientName=f"{STACK}-{logical_id}",
            GenerateSecret=bool(props.get("GenerateSecret", False)),
            ExplicitAuthFlows=props.get("ExplicitAuthFlows", []),
        )["UserPoolClient"]
        return Physical(ref=created["ClientId"])

    def _http_api(self, logical_id: str, properties: dict[str, Any]) -> Physical:
        # Served by local.gateway; the id only has to be stable.
        return Physical(ref="localapi")

    def _function(self, logical_id: str, properties: dict[str, Any]) -> Physical:
        # Functions run in the local runner's workers; they answer Ref/GetAtt like deployed ones.
        name = f"{STACK}-{logical_id}"
        return Physical(ref=name, attrs={"Arn": self._arn("lambda", f"function:{name}")})

    def _state_machine(self, logical_id: str, properties: dict[str, Any]) -> Physical:
        substitutions = self.props(properties.get("DefinitionSubstitutions", {}))
        asl = definition(properties, {k: str(v) for k, v in substitutions.items()})
        return create_state_machine(self._client("stepfunctions"), f"{STACK}-{logical_id}", asl, ACCOUNT_ID)
