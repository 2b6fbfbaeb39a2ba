"""Demo data: an organization, a dashboard user with a real Cognito JWT, and an API key."""

from __future__ import annotations

import secrets
from dataclasses import asdict, dataclass

from local.stack import LocalStack
from shared import wiring
from shared.auth.api_keys import issue_key
from shared.clock import utc_now

DEMO_ORG = "demo-shop"
DEMO_EMAIL = "demo@example.com"


@dataclass
class DemoCredentials:
    org_id: str
    email: str
    password: str
    user_id: str
    id_token: str
    api_key: str
    api_key_prefix: str


def sign_in(stack: LocalStack, email: str, password: str) -> str:
    """A fresh ID token for a user from moto's Cognito (real RS256 JWT)."""
    client_id = stack.physical["UserPoolClient"].ref
    result = stack.client("cognito-idp").initiate_auth(
        ClientId=client_id,
        AuthFlow="USER_PASSWORD_AUTH",
        AuthParameters={"USERNAME": email, "PASSWORD": password},
    )
    token: str = result["AuthenticationResult"]["IdToken"]
    return token


def create_user(stack: LocalStack, org_id: str, email: str) -> tuple[str, str]:
    """Create a confirmed Cognito user in ``org_id``; returns (user id, password)."""
    cognito = stack.client("cognito-idp")
    pool_id = stack.physical["UserPool"].ref
    password = f"Demo-{secrets.token_urlsafe(12)}1a"
    created = cognito.admin_create_user(
        UserPoolId=pool_id,
        Username=email,
        UserAttributes=[{"Name": "email", "Value": email}, {"Name": "email_verified", "Value": "true"}],
        MessageAction="SUPPRESS",
    )
    cognito.admin_set_user_password(UserPoolId=pool_id, Username=email, Password=password, Permanent=True)
    attrs = {a["Name"]: a["Value"] for a in created["User"]["Attributes"]}
    user_id = attrs.get("sub", created["User"]["Username"])
    now = utc_now()
    wiring.organization_store().create(org_id, org_id.replace("-", " ").title(), now)
    wiring.organization_store().add_member(user_id, org_id, email)
    return user_id, password


def seed_demo(stack: LocalStack, org_id: str = DEMO_ORG, email: str = DEMO_EMAIL) -> DemoCredentials:
    """Seed the demo organization, user and API key; returns what a person needs to use them."""
    user_id, password = create_user(stack, org_id, email)
    new_key = issue_key(org_id, "demo key", utc_now())
    wiring.api_key_store().put(new_key.stored)
    return DemoCredentials(
        org_id=org_id,
        email=email,
        password=password,
        user_id=user_id,
        id_token=sign_in(stack, email, password),
        api_key=new_key.key,
        api_key_prefix=new_key.stored.prefix,
    )


def as_dict(credentials: DemoCredentials) -> dict[str, str]:
    return asdict(credentials)
