"""An organization set up to sell through the hosted checkout, as a merchant sets it up: a dashboard
user, its card-payment account connected through the provider's onboarding page, and a shop synced
through the data source (three small files whose products the tests know)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import httpx

from local.connected import ConnectedOrg
from local.payments_browser import connect_payments
from local.seed import create_user, sign_in
from local.stack import LocalStack
from tests.integration.test_data_source import upload_shop, wait_for_sync

# The products file: a mug at 12.50, a teapot at 30, and a gift card with no price.
PRODUCTS = (
    b"product_id,name,category,price\n"
    b"p-mug,Ada's Mug,kitchen,12.50\n"
    b"p-teapot,Teapot,kitchen,30\n"
    b"p-gift,Gift card,gifts,\n"
)
CUSTOMERS = b"user_id,email,first_name,last_name,country\n" + b"".join(
    f"u{i},buyer{i}@example.com,Ada,Buyer,GB\n".encode() for i in range(1, 13)
)
ORDERS = b"order_id,user_id,product_id,quantity,amount,timestamp\n" + b"".join(
    f"o{i},u{i % 12 + 1},{('p-mug', 'p-teapot')[i % 2]},1,{(12.5, 30)[i % 2]},"
    f"2026-{i % 9 + 1:02d}-10T10:00:00Z\n".encode()
    for i in range(1, 40)
)


@dataclass(frozen=True)
class PaymentsShop:
    org: ConnectedOrg
    email: str
    password: str


def new_user(stack: LocalStack) -> tuple[ConnectedOrg, str, str]:
    """A new organization's dashboard user (nothing connected)."""
    org_id = f"org-{uuid.uuid4().hex[:8]}"
    email = f"{org_id}@example.com"
    _, password = create_user(stack, org_id, email)
    return (
        ConnectedOrg(org_id, {"Authorization": f"Bearer {sign_in(stack, email, password)}"}),
        email,
        password,
    )


def sync_products(api: httpx.Client, org: ConnectedOrg, products: bytes = PRODUCTS) -> None:
    """Sync the shop's three files through the API and wait until its trainings have ended: the
    version is then in force if its purchase model trained (a first sync of these files does)."""
    upload_id = upload_shop(api, org, {"customers": CUSTOMERS, "products": products, "orders": ORDERS})
    started = api.post("/platform-ads/data-source/sync", json={"uploadId": upload_id}, headers=org.headers)
    assert started.status_code == 202, started.text
    sync_id = started.json()["syncId"]
    source = wait_for_sync(api, org, sync_id, trained=True)
    [sync] = [s for s in source["syncs"] if s["syncId"] == sync_id]
    assert sync["state"] == "synced", sync


def shop_taking_payments(stack: LocalStack, *, business_name: str = "Ada's Mugs") -> PaymentsShop:
    """A new organization with its payments account connected and its products synced."""
    org, email, password = new_user(stack)
    connected = connect_payments(stack.api_url, org.headers["Authorization"], business_name=business_name)
    assert connected.status_code == 200, connected.text
    assert connected.json()["checkoutAvailable"] is True, connected.text
    with httpx.Client(base_url=stack.api_url, timeout=60) as api:
        sync_products(api, org)
    return PaymentsShop(org, email, password)
