"""The Events page's report through the local stack (issue 21, item 6): GET /platform-ads/events counts
what a sync and the shop's pages sent today, by source and event name, and lists the rejected events
with what to do, for the signed-in user's organization only."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from local.connected import ConnectedOrg, connected_org
from local.payments_browser import connect_payments
from local.stack import LocalStack
from shared import wiring
from tests.integration.payments_shop import PaymentsShop, sync_products
from tests.integration.test_payments_webhooks import event_of, eventually, new_session, our_attempts, pay
from tests.integration.test_purchase_events import ShopFiles, purchases_of, sync
from tests.integration.test_site_events import page_event, post_events, site_key

pytestmark = pytest.mark.integration


def report(api: httpx.Client, org: ConnectedOrg, days: int = 14) -> dict[str, Any]:
    answer = api.get("/platform-ads/events", params={"days": days}, headers=org.headers)
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def test_a_syncs_purchases_and_the_pages_events_are_counted_today_with_the_rejected_one_explained(
    stack: LocalStack, api: httpx.Client, org: ConnectedOrg
) -> None:
    # Given a shop that synced orders of the last ten days (seven days' are in the platform's window)
    shop = ShopFiles()
    purchases = purchases_of(org, sync(api, org, shop))
    assert purchases.sent == len(shop.in_window())
    # And whose pages sent two add-to-carts, and a purchase without its value
    key = site_key(api, org)["siteKey"]
    answer = post_events(
        api, key, [page_event(), page_event(), page_event("Purchase", "order-no-value", content_ids=["p1"])]
    )
    assert answer.status_code == 200, answer.text
    assert answer.json()["sent"] == 2
    # When the Events page asks for the last 14 days
    found = report(api, org)
    # Then today holds them by source and event name, and the other 13 days are there with nothing
    today = datetime.now(UTC).date().isoformat()
    assert found["lastDay"] == today
    assert len(found["perDay"]) == 14
    [day] = [entry for entry in found["perDay"] if entry["date"] == today]
    rows = {(row["source"], row["eventName"]): (row["sent"], row["rejected"]) for row in day["events"]}
    assert rows == {
        ("sync", "Purchase"): (len(shop.in_window()), 0),
        ("site", "AddToCart"): (2, 0),
        ("site", "Purchase"): (0, 1),
    }
    assert sum(entry["total"]["sent"] for entry in found["perDay"]) == len(shop.in_window()) + 2
    assert [row["sourceLabel"] for row in found["bySource"]] == [
        "Synced orders",
        "The shop's pages",
        "The shop's pages",
    ]
    # And the rejected purchase is listed with the check that failed, in plain words and what to do
    [rejected] = found["rejections"]
    assert (rejected["eventId"], rejected["source"]) == ("order-no-value", "site")
    assert "value and currency" in rejected["reason"]
    assert "value" in rejected["explanation"]
    assert "custom_data" not in rejected["explanation"]
    assert "thank-you page" in rejected["remedy"]
    # And the 28 days' report has the same counts over more days
    month = report(api, org, 28)
    assert len(month["perDay"]) == 28
    assert month["total"] == found["total"]


def test_another_organization_sees_none_of_it_and_a_stranger_is_refused(
    stack: LocalStack, api: httpx.Client, org: ConnectedOrg
) -> None:
    # Given an organization whose page sent an event
    key = site_key(api, org)["siteKey"]
    assert post_events(api, key, [page_event()]).status_code == 200
    assert report(api, org)["total"]["sent"] == 1
    # Then another organization's report is empty, and no one without a session reads any
    other = connected_org(stack, api)
    assert report(api, other)["total"] == {"sent": 0, "rejected": 0, "skipped": 0, "notSent": 0}
    assert report(api, other)["rejections"] == []
    assert api.get("/platform-ads/events").status_code == 401


def test_a_period_other_than_14_or_28_days_is_a_400_naming_it(api: httpx.Client, org: ConnectedOrg) -> None:
    answer = api.get("/platform-ads/events", params={"days": 7}, headers=org.headers)
    assert answer.status_code == 400
    assert answer.json()["error"]["field"] == "days"


def test_a_hosted_checkouts_paid_order_is_counted_once_even_when_its_event_is_delivered_again(
    stack: LocalStack, api: httpx.Client
) -> None:
    # Given a shop whose ad account is connected and whose payments take cards
    org = connected_org(stack, api)
    assert connect_payments(stack.api_url, org.headers["Authorization"]).json()["checkoutAvailable"] is True
    sync_products(api, org)
    # When a shopper pays on the hosted checkout
    session_id = new_session(api, PaymentsShop(org, "", ""))
    with httpx.Client(base_url=f"{stack.payments.url}/_admin", timeout=30) as payments:
        pay(payments, session_id)
        event = event_of(payments, "checkout.session.completed", session_id)

        # Then the Events page counts its purchase under the hosted checkout
        def checkout_rows() -> list[dict[str, Any]]:
            return [row for row in report(api, org)["bySource"] if row["source"] == "checkout"]

        [row] = eventually(checkout_rows)
        assert (row["sourceLabel"], row["eventName"], row["sent"], row["rejected"]) == (
            "Hosted checkout",
            "Purchase",
            1,
            0,
        )
        # When the provider delivers the event again, and it is answered
        attempts = len(our_attempts(event, stack))
        payments.post(f"/events/{event['id']}/resend", json={})
        eventually(
            lambda: (
                len(our_attempts(event_of(payments, "checkout.session.completed", session_id), stack))
                > attempts
            )
        )
    # Then it is still counted once (the products' sync sent nothing: its orders are older than the
    # window, counted as skipped)
    sent = [(r["source"], r["sent"]) for r in report(api, org)["bySource"] if r["sent"] or r["rejected"]]
    assert sent == [("checkout", 1)]


def test_a_hosted_checkout_order_sent_again_by_the_next_sync_is_counted_once_under_the_checkout(
    stack: LocalStack, api: httpx.Client
) -> None:
    # Given a connected shop taking payments, whose first sync's purchases are all sent
    org = connected_org(stack, api)
    assert connect_payments(stack.api_url, org.headers["Authorization"]).json()["checkoutAvailable"] is True
    sync_products(api, org)
    first = wiring.dataset_store().latest(org.org_id)
    assert first is not None
    purchases_of(org, first.version, until=("sent",))
    synced_before = purchases_sent(report(api, org), "sync")
    # And a shopper paid on the hosted checkout, its purchase counted under it
    session_id = new_session(api, PaymentsShop(org, "", ""))
    with httpx.Client(base_url=f"{stack.payments.url}/_admin", timeout=30) as payments:
        pay(payments, session_id)
    eventually(lambda: purchases_sent(report(api, org), "checkout") == 1, timeout=120)

    # When the shop syncs again: the order is in the new version, and its purchase is sent again
    # with the same event id (the platform keeps one)
    sync_products(api, org)
    second = wiring.dataset_store().latest(org.org_id)
    assert second is not None
    assert second.version != first.version
    sent = purchases_of(org, second.version, until=("sent",))
    assert (sent.new_orders, sent.sent) == (1, 1)

    # Then the Events page counts that order once, under the hosted checkout that sent it first
    found = report(api, org)
    assert purchases_sent(found, "checkout") == 1
    assert purchases_sent(found, "sync") == synced_before


def purchases_sent(found: dict[str, Any], source: str) -> int:
    """The Purchase events the report counts as sent from ``source`` over its period."""
    return sum(
        row["sent"] for row in found["bySource"] if (row["source"], row["eventName"]) == (source, "Purchase")
    )
