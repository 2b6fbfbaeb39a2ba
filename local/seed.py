"""Demo data: an organization, a dashboard user with a real Cognito JWT, and an API key."""

from __future__ import annotations

import secrets
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from local.stack import LocalStack
from shared import wiring
from shared.auth.api_keys import issue_key
from shared.clock import utc_now

if TYPE_CHECKING:
    from tools.synthetic import SyntheticShop

DEMO_ORG = "demo-shop"
DEMO_EMAIL = "demo@example.com"
PURCHASE_MODEL = "purchase-likelihood"
RECOMMENDATION_MODEL = "recommended-products"


@dataclass
class DemoCredentials:
    org_id: str
    email: str
    password: str
    user_id: str
    id_token: str
    api_key: str
    api_key_prefix: str
    models: list[str]
    sample_user_id: str
    sample_product_id: str


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


def demo_shop(n_users: int = 1000, seed: int = 7, ending: datetime | None = None) -> SyntheticShop:
    """The synthetic shop ``make dev`` trains its demo models on and writes as the launch wizard's
    files: one shop, so the user and product the banner's examples name are in the files a new user
    uploads (and the product's hosted checkout sells it once they are synced). With ``ending``, its
    year is moved by whole days to end in the day before it: its last week's orders are then recent
    enough for the platform to take as purchase events when the wizard syncs them (generated, it ends
    on 2024-12-31, and every order was skipped as older than the platform's 7 days)."""
    from tools.synthetic import SyntheticConfig, generate_shop, moved

    shop = generate_shop(SyntheticConfig(n_users=n_users, n_products=max(50, n_users // 10), seed=seed))
    days = (ending - shop.end) // timedelta(days=1) if ending is not None else 0
    return moved(shop, timedelta(days=days)) if days > 0 else shop


def sample_ids(shop: SyntheticShop) -> tuple[str, str]:
    """A (user id, product id) of ``shop``: its first order's, so the models know both."""
    order = shop.data.orders[0]
    return order.user_id, order.product_id


def seed_models(org_id: str, n_users: int = 2000, shop: SyntheticShop | None = None) -> tuple[str, str]:
    """Train the two demo models on ``shop`` (by default a synthetic shop of ``n_users``) and register
    them exactly as the training function does. Returns a (user id, product id) the models know."""
    from shared.ml.training import train_model
    from shared.predictions.registry import register_trained_model

    shop = shop or demo_shop(n_users, seed=42)
    for name, model_type in ((PURCHASE_MODEL, "purchase"), (RECOMMENDATION_MODEL, "recommendation")):
        model = train_model(shop.data, name=name, model_type=model_type)  # type: ignore[arg-type]
        register_trained_model(org_id, model, artifacts=wiring.artifact_blobs(), models=wiring.model_store())
    return sample_ids(shop)


def seed_demo(
    stack: LocalStack,
    org_id: str = DEMO_ORG,
    email: str = DEMO_EMAIL,
    n_users: int = 2000,
    shop: SyntheticShop | None = None,
) -> DemoCredentials:
    """Seed the demo organization, user, API key and trained models (on ``shop``, by default a
    synthetic shop of ``n_users``); returns what a person needs."""
    user_id, password = create_user(stack, org_id, email)
    new_key = issue_key(org_id, "demo key", utc_now())
    wiring.api_key_store().put(new_key.stored)
    sample_user, sample_product = seed_models(org_id, n_users, shop)
    return DemoCredentials(
        org_id=org_id,
        email=email,
        password=password,
        user_id=user_id,
        id_token=sign_in(stack, email, password),
        api_key=new_key.key,
        api_key_prefix=new_key.stored.prefix,
        models=[PURCHASE_MODEL, RECOMMENDATION_MODEL],
        sample_user_id=sample_user,
        sample_product_id=sample_product,
    )


def write_shop_files(folder: Path, shop: SyntheticShop) -> list[Path]:
    """``shop``'s customers, products and orders as the CSV files the launch wizard uploads, so a new
    user can try the wizard at once. Returns their paths."""
    from shared.ml.datasets import dump_records

    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for kind, records in (
        ("customers", shop.data.customers),
        ("products", shop.data.products),
        ("orders", shop.data.orders),
    ):
        path = folder / f"{kind}.csv"
        path.write_bytes(dump_records(records, "csv"))
        written.append(path)
    return written


def as_dict(credentials: DemoCredentials) -> dict[str, object]:
    return asdict(credentials)
