"""Connecting the card-payment account end to end (issue 22, item 2): the provider's onboarding page and
back, the state bound to the user who started, status, disconnect, through the local gateway and the
payments sandbox (docs/payments-notes.md §2)."""

from __future__ import annotations

import json
import uuid
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx
import pytest

from local.payments_browser import connect_payments, onboard, post_payments_callback
from local.seed import create_user, sign_in
from local.stack import LocalStack
from shared import wiring

pytestmark = pytest.mark.integration


@pytest.fixture
def member(stack: LocalStack) -> dict[str, str]:
    """A fresh organization with its own signed-in dashboard user."""
    return new_member(stack, f"org-{uuid.uuid4().hex[:8]}")


def new_member(stack: LocalStack, org_id: str) -> dict[str, str]:
    email = f"{uuid.uuid4().hex[:8]}@{org_id}.example.com"
    _, password = create_user(stack, org_id, email)
    return {"org_id": org_id, "Authorization": f"Bearer {sign_in(stack, email, password)}"}


def auth(member: dict[str, str]) -> dict[str, str]:
    return {"Authorization": member["Authorization"]}


def start(api: httpx.Client, member: dict[str, str]) -> str:
    started = api.post("/payments/connect", headers=auth(member))
    assert started.status_code == 200, started.text
    url: str = started.json()["onboardingUrl"]
    return url


def accounts_of(payments: httpx.Client, org_id: str) -> list[dict[str, Any]]:
    held = payments.get("/state").json()["accounts"]
    return [a for a in held if a["metadata"].get("org_id") == org_id]


def test_onboarding_on_the_providers_page_and_back_enables_card_payments(
    api: httpx.Client, stack: LocalStack, member: dict[str, str], payments: httpx.Client
) -> None:
    # Given: nothing is connected yet
    before = api.get("/payments/status", headers=auth(member)).json()
    assert (before["status"], before["checkoutAvailable"]) == ("not_connected", False)
    # When: the user presses Connect, completes the provider's page, and the dashboard posts the state
    url = start(api, member)
    assert url.startswith(f"{stack.payments.url}/setup/s/acct_")
    answered = onboard(url, business_name="Ada's Mugs")
    location = answered.headers["location"]
    assert location.startswith(f"{stack.dashboard_url}/payments-callback.html?state=")
    done = post_payments_callback(location, stack.api_url, member["Authorization"])
    # Then: the account, read from the provider, takes card payments
    assert done.status_code == 200, done.text
    status = api.get("/payments/status", headers=auth(member)).json()
    assert status == done.json()
    assert (status["status"], status["chargesEnabled"], status["checkoutAvailable"]) == ("active", True, True)
    assert (status["businessName"], status["missing"], status["remedy"]) == ("Ada's Mugs", [], None)
    [account] = accounts_of(payments, member["org_id"])
    assert status["accountHint"] == account["id"][-4:]
    # And the account id is stored only encrypted
    item = wiring.table(stack.physical["MainTable"].ref).get_item(
        Key={"pk": f"ORG#{member['org_id']}", "sk": "PAYMENTS"}
    )["Item"]
    assert account["id"] not in json.dumps(item, default=str)
    assert item["account"]["ciphertext"]


def test_finishing_later_says_what_the_provider_still_needs_and_continuing_keeps_the_account(
    api: httpx.Client, stack: LocalStack, member: dict[str, str], payments: httpx.Client
) -> None:
    # Given: the user leaves the provider's page with "Finish later"
    answered = onboard(start(api, member), decision="later")
    later = post_payments_callback(answered.headers["location"], stack.api_url, member["Authorization"])
    assert later.status_code == 200, later.text
    # Then: the status says charges are not enabled and what is missing, in words
    status = later.json()
    assert (status["status"], status["chargesEnabled"], status["checkoutAvailable"]) == (
        "onboarding",
        False,
        False,
    )
    assert "a bank account for payouts" in status["missing"]
    assert "acceptance of the provider's services agreement" in status["missing"]
    assert status["remedy"].startswith("Press Continue setup")
    # When: the user continues the set-up
    done = connect_payments(stack.api_url, member["Authorization"])
    # Then: the same account is onboarded; no second one was made
    assert done.json()["status"] == "active"
    assert len(accounts_of(payments, member["org_id"])) == 1


def test_a_return_posted_by_another_user_of_the_organization_is_refused_and_connects_nothing(
    api: httpx.Client, stack: LocalStack, member: dict[str, str]
) -> None:
    # Given: a link the first user started and completed on the provider's page
    answered = onboard(start(api, member))
    location = answered.headers["location"]
    colleague = new_member(stack, member["org_id"])
    # When: a colleague's session posts the state
    refused = post_payments_callback(location, stack.api_url, colleague["Authorization"])
    # Then: it is refused (the connection's status is the provider's to say: its own account.updated
    # webhook for the account the first user started may already have made it active)
    assert refused.status_code == 403, refused.text
    # And the user who started it can still finish (the refusal did not spend the state)
    done = post_payments_callback(location, stack.api_url, member["Authorization"])
    assert done.status_code == 200, done.text
    assert done.json()["status"] == "active"


def test_a_replayed_return_is_refused(api: httpx.Client, stack: LocalStack, member: dict[str, str]) -> None:
    # Given: a completed return
    location = onboard(start(api, member)).headers["location"]
    assert post_payments_callback(location, stack.api_url, member["Authorization"]).status_code == 200
    # When: the same state is posted again
    again = post_payments_callback(location, stack.api_url, member["Authorization"])
    # Then: it is refused as used
    assert again.status_code == 400, again.text
    assert again.json()["error"]["field"] == "state"


def test_an_onboarding_link_opened_twice_goes_to_the_refresh_page_of_the_dashboard(
    api: httpx.Client, stack: LocalStack, member: dict[str, str]
) -> None:
    # Given: a link already opened once
    url = start(api, member)
    assert httpx.get(url).status_code == 200
    # When: it is opened again
    again = httpx.get(url)
    # Then: the provider sends the browser to the dashboard's page that makes a new link
    assert again.status_code == 302
    refresh = urlsplit(again.headers["location"])
    assert (
        f"{refresh.scheme}://{refresh.netloc}{refresh.path}"
        == f"{stack.dashboard_url}/payments-callback.html"
    )
    assert dict(parse_qsl(refresh.query)) == {"refresh": "1"}


def test_a_lost_answer_when_the_account_is_created_makes_one_account(
    api: httpx.Client, member: dict[str, str], payments: httpx.Client
) -> None:
    # Given: the provider creates the account but its answer is lost (the SDK retries by itself)
    payments.post("/faults", json={"kind": "lost_answer", "method": "POST", "path": "^/v1/accounts$"})
    # When: the user presses Connect
    start(api, member)
    # Then: the retry carried the same idempotency key, and there is one account
    [account] = accounts_of(payments, member["org_id"])
    logged = [
        entry
        for entry in payments.get("/requests", params={"path": "^/v1/accounts$", "method": "POST"}).json()[
            "requests"
        ]
        if entry["idempotency_key"] and entry["params"].get("metadata", {}).get("org_id") == member["org_id"]
    ]
    assert [(e["status"], e["replayed"]) for e in logged] == [(500, False), (200, True)]
    assert logged[0]["idempotency_key"] == logged[1]["idempotency_key"]
    assert account["id"]


def test_disconnecting_stops_payments_and_connecting_again_resumes_the_same_account(
    api: httpx.Client, stack: LocalStack, member: dict[str, str], payments: httpx.Client
) -> None:
    # Given: a connected payments account
    assert connect_payments(stack.api_url, member["Authorization"]).json()["status"] == "active"
    [account] = accounts_of(payments, member["org_id"])
    # When: the user disconnects
    answered = api.post("/payments/disconnect", headers=auth(member))
    # Then: the connection is inactive and takes no payments; the account is kept (encrypted) for a reconnect
    assert answered.status_code == 200, answered.text
    status = answered.json()
    assert (status["connected"], status["status"], status["checkoutAvailable"]) == (False, "inactive", False)
    assert status["accountHint"] == account["id"][-4:]
    assert status["remedy"].startswith("Press Reconnect")
    item = wiring.table(stack.physical["MainTable"].ref).get_item(
        Key={"pk": f"ORG#{member['org_id']}", "sk": "PAYMENTS"}
    )["Item"]
    assert account["id"] not in json.dumps(item, default=str)
    # And disconnecting again says there is nothing connected
    assert api.post("/payments/disconnect", headers=auth(member)).status_code == 404
    # And connecting again resumes the same account at the provider: no second account is created
    again = connect_payments(stack.api_url, member["Authorization"]).json()
    assert (again["status"], again["checkoutAvailable"], again["accountHint"]) == (
        "active",
        True,
        account["id"][-4:],
    )
    assert [a["id"] for a in accounts_of(payments, member["org_id"])] == [account["id"]]


def test_a_different_account_is_connected_only_when_asked_for_after_a_disconnect(
    api: httpx.Client, stack: LocalStack, member: dict[str, str], payments: httpx.Client
) -> None:
    # Given: a connected payments account
    assert connect_payments(stack.api_url, member["Authorization"]).json()["status"] == "active"
    # When: the user asks for a different account without disconnecting
    refused = api.post("/payments/connect", headers=auth(member), json={"newAccount": True})
    # Then: it is refused with what to do
    assert refused.status_code == 409, refused.text
    assert refused.json()["error"]["remedy"].startswith("Disconnect the current payments account first")
    # When: the user disconnects and asks for a different account
    assert api.post("/payments/disconnect", headers=auth(member)).status_code == 200
    started = api.post("/payments/connect", headers=auth(member), json={"newAccount": True})
    # Then: the link onboards a second account, the first staying the merchant's at the provider
    assert started.status_code == 200, started.text
    done = post_payments_callback(
        onboard(started.json()["onboardingUrl"]).headers["location"], stack.api_url, member["Authorization"]
    )
    accounts = accounts_of(payments, member["org_id"])
    assert len(accounts) == 2
    assert done.json()["accountHint"] == accounts[-1]["id"][-4:] != accounts[0]["id"][-4:]
