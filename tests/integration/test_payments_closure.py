"""Closing an organization that takes card payments (issue 22, item 5), through the local stack and
the payments sandbox: the checkouts still open are expired at the provider before anything is
deleted, nothing of the payments stays (connection, checkouts, orders, event claims, the buyers'
files), the merchant's account stays theirs at the provider, and a late delivery about the
organization is acknowledged and ignored."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import pytest

from local.stack import LocalStack
from shared import wiring
from tests.integration.patience import BACKGROUND_JOB_SECONDS
from tests.integration.payments_shop import shop_taking_payments, sync_products
from tests.integration.test_account_closure import scan
from tests.integration.test_payments_webhooks import (
    event_of,
    eventually,
    new_session,
    orders,
    pay,
    session_of,
)

pytestmark = pytest.mark.integration

CLOSURE = "/platform-ads/account/closure"


def closed(api: httpx.Client, headers: dict[str, str]) -> dict[str, Any]:
    """The closure once it has ended, as the dashboard polls it."""
    deadline = time.monotonic() + BACKGROUND_JOB_SECONDS
    while True:
        closure: dict[str, Any] = api.get(CLOSURE, headers=headers).json()["closure"]
        if closure["state"] in {"completed", "failed"}:
            return closure
        assert time.monotonic() < deadline, closure
        time.sleep(0.3)


def test_closing_an_organization_expires_its_open_checkouts_and_keeps_nothing_of_its_payments(
    api: httpx.Client, stack: LocalStack, payments: httpx.Client
) -> None:
    # Given: a shop taking payments, with a paid order (its buyer's details in the data bucket, in its
    # day's part once a sync compacted them) and a checkout a shopper left open on the provider's page
    shop = shop_taking_payments(stack, business_name="Closing Mugs")
    org_id = shop.org.org_id
    paid = new_session(api, shop, quantity=1)
    pay(payments, paid)
    completed = event_of(payments, "checkout.session.completed", paid)
    eventually(lambda: [o for o in orders(api, shop)["orders"] if o["orderId"] == paid])
    # (a sync compacted the order into its day's part: the closure must find that too)
    with httpx.Client(base_url=stack.api_url, timeout=60) as dashboard:
        sync_products(dashboard, shop.org)
    [part] = wiring.data_blobs().keys(f"checkout-orders/{org_id}/")
    assert f"checkout-orders/{org_id}/days/" in part
    left_open = new_session(api, shop, product="p-teapot", quantity=1)
    assert session_of(payments, left_open)["status"] == "open"
    account = session_of(payments, left_open)["account"]
    name = wiring.organization_store().name_of(org_id)
    assert name

    # When: the organization is closed and the closure runs to its end
    accepted = api.post(CLOSURE, json={"confirmName": name}, headers=shop.org.headers)
    assert accepted.status_code == 202, accepted.text
    closure = closed(api, shop.org.headers)

    # Then: it completed, the open checkout expired at the provider: nobody can pay it any more
    assert closure["state"] == "completed", closure
    assert session_of(payments, left_open)["status"] == "expired"
    refused = payments.post(f"/checkout/sessions/{left_open}/pay", json={"card": "4242 4242 4242 4242"})
    assert refused.status_code == 409, refused.text
    # And the merchant's account is still theirs at the provider
    assert account in {a["id"] for a in payments.get("/state").json()["accounts"]}
    # And nothing of the organization's payments is left: no item names it, no buyer's file
    assert [item["sk"] for item in scan(stack, "MainTable") if org_id in json.dumps(item, default=str)] == []
    assert wiring.data_blobs().keys(f"checkout-orders/{org_id}/") == []
    # And a late redelivery of its paid event is acknowledged and makes nothing
    resent = payments.post(f"/events/{completed['id']}/resend", json={})
    assert resent.status_code == 200, resent.text
    endpoint = f"{stack.api_url}/payments/webhook"
    [ours] = [e["id"] for e in payments.get("/state").json()["webhook_endpoints"] if e["url"] == endpoint]
    assert [a["status"] for a in resent.json()["attempts"] if a["endpoint"] == ours] == [200]
    assert [item["sk"] for item in scan(stack, "MainTable") if org_id in json.dumps(item, default=str)] == []
