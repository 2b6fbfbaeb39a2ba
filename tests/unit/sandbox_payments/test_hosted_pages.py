"""The test cards and the hosted pages (docs/payments-notes.md §2.2, §3.4, §7)."""

from __future__ import annotations

import re

import httpx
import pytest

from payments_sandbox import cards
from tests.unit.sandbox_payments.harness import Harness

JANUARY_2027 = {"now_year": 2027, "now_month": 1}


@pytest.mark.parametrize(
    ("number", "outcome", "decline_code"),
    [
        ("4242 4242 4242 4242", cards.Outcome.SUCCEEDS, None),
        ("4000 0000 0000 0002", cards.Outcome.DECLINED, "generic_decline"),
        ("4000 0025 0000 3155", cards.Outcome.REQUIRES_AUTHENTICATION, None),
        ("4000 0000 0000 9995", cards.Outcome.DECLINED, "insufficient_funds"),
        ("4242 4242 4242 4241", cards.Outcome.INVALID, None),
        ("5555 5555 5555 4444", cards.Outcome.DECLINED, "test_mode_live_card"),
    ],
)
def test_each_test_card_does_what_the_documentation_says(
    number: str, outcome: cards.Outcome, decline_code: str | None
) -> None:
    result = cards.charge(number, "12 / 34", "123", **JANUARY_2027)
    assert (result.outcome, result.decline_code) == (outcome, decline_code)


def test_a_past_expiry_is_invalid() -> None:
    result = cards.charge("4242424242424242", "12 / 26", "123", **JANUARY_2027)
    assert (result.outcome, result.param) == (cards.Outcome.INVALID, "exp")


def form_fields(html: str) -> dict[str, str]:
    return dict(re.findall(r'name="(\w+)" value="([^"]*)"', html))


def pay(sandbox: Harness, url: str, card: str) -> httpx.Response:
    path = httpx.URL(url).path
    response = sandbox.client.post(
        path,
        data={
            "email": "buyer@example.com",
            "cardnumber": card,
            "exp": "12 / 34",
            "cvc": "123",
            "name": "Ada Buyer",
        },
    )
    return httpx.Response(response.status_code, headers=dict(response.headers), content=response.get_data())


def test_the_success_card_completes_the_session_and_goes_to_the_success_url(sandbox: Harness) -> None:
    account = sandbox.account()
    session = sandbox.session(account)
    response = pay(sandbox, session["url"], "4242 4242 4242 4242")
    # Then the browser goes to success_url with the session id in place of the placeholder
    assert response.status_code == 303
    assert response.headers["location"] == f"http://shop.test/paid?session={session['id']}"
    read = sandbox.call("GET", f"/v1/checkout/sessions/{session['id']}", account=account).get_json()
    assert (read["status"], read["payment_status"], read["url"]) == ("complete", "paid", None)
    assert read["customer_details"] == {"email": "buyer@example.com", "name": "Ada Buyer"}
    assert read["payment_intent"].startswith("pi_")
    assert [e["type"] for e in sandbox.events()][-2:] == [
        "checkout.session.completed",
        "payment_intent.succeeded",
    ]


def test_a_declined_card_keeps_the_session_open_and_says_why(sandbox: Harness) -> None:
    account = sandbox.account()
    session = sandbox.session(account)
    response = pay(sandbox, session["url"], "4000 0000 0000 0002")
    assert response.status_code == 402
    assert '<p role="alert">Your card was declined.</p>' in response.text
    assert "4000 0000 0000 0002" not in response.text
    read = sandbox.call("GET", f"/v1/checkout/sessions/{session['id']}", account=account).get_json()
    assert (read["status"], read["payment_status"]) == ("open", "unpaid")
    [failed] = sandbox.events("payment_intent.payment_failed")
    assert failed["data"]["object"]["last_payment_error"]["decline_code"] == "generic_decline"
    assert sandbox.admin("GET", "/state")["checkout_sessions"][0]["attempts"] == [
        {"last4": "0002", "outcome": "declined", "code": "card_declined"}
    ]


def test_a_card_that_requires_authentication_pays_once_authenticated(sandbox: Harness) -> None:
    account = sandbox.account()
    session = sandbox.session(account)
    challenge = pay(sandbox, session["url"], "4000 0025 0000 3155")
    assert challenge.status_code == 303
    assert sandbox.client.get(challenge.headers["location"]).status_code == 200
    done = sandbox.client.post(challenge.headers["location"], data={"decision": "complete"})
    assert done.status_code == 303
    read = sandbox.call("GET", f"/v1/checkout/sessions/{session['id']}", account=account).get_json()
    assert read["payment_status"] == "paid"


def test_a_failed_authentication_is_a_decline(sandbox: Harness) -> None:
    account = sandbox.account()
    session = sandbox.session(account)
    challenge = pay(sandbox, session["url"], "4000 0025 0000 3155")
    failed = sandbox.client.post(challenge.headers["location"], data={"decision": "fail"})
    assert failed.status_code == 402
    assert "unable to authenticate" in failed.get_data(as_text=True)
    read = sandbox.call("GET", f"/v1/checkout/sessions/{session['id']}", account=account).get_json()
    assert read["status"] == "open"


def test_onboarding_submitted_enables_charges_and_returns(sandbox: Harness) -> None:
    account = sandbox.account(onboarded=False)
    link = sandbox.call(
        "POST",
        "/v1/account_links",
        {
            "account": account,
            "type": "account_onboarding",
            "refresh_url": "http://shop.test/r",
            "return_url": "http://shop.test/back",
        },
    ).get_json()
    path = httpx.URL(link["url"]).path
    fields = form_fields(sandbox.client.get(path).get_data(as_text=True))
    done = sandbox.client.post(
        path,
        data={"nonce": fields["nonce"], "business_name": "Ada's Mugs", "agree": "yes", "decision": "submit"},
    )
    assert (done.status_code, done.headers["Location"]) == (303, "http://shop.test/back")
    read = sandbox.call("GET", f"/v1/accounts/{account}").get_json()
    assert (read["charges_enabled"], read["details_submitted"], read["requirements"]["currently_due"]) == (
        True,
        True,
        [],
    )
    assert read["capabilities"] == {"card_payments": "active"}
    [updated] = sandbox.events("account.updated")
    assert updated["account"] == account
    assert updated["data"]["previous_attributes"]["charges_enabled"] is False


def test_onboarding_left_for_later_returns_without_enabling_charges(sandbox: Harness) -> None:
    account = sandbox.account(onboarded=False)
    link = sandbox.call(
        "POST",
        "/v1/account_links",
        {"account": account, "type": "account_onboarding", "return_url": "http://shop.test/back"},
    ).get_json()
    path = httpx.URL(link["url"]).path
    fields = form_fields(sandbox.client.get(path).get_data(as_text=True))
    back = sandbox.client.post(path, data={"nonce": fields["nonce"], "decision": "later"})
    # Then the return_url is reached, but it proves nothing: the account is not enabled
    assert back.headers["Location"] == "http://shop.test/back"
    assert sandbox.call("GET", f"/v1/accounts/{account}").get_json()["charges_enabled"] is False
    assert sandbox.events("account.updated") == []


def test_an_onboarding_form_without_the_pages_nonce_is_refused(sandbox: Harness) -> None:
    account = sandbox.account(onboarded=False)
    link = sandbox.call(
        "POST", "/v1/account_links", {"account": account, "type": "account_onboarding"}
    ).get_json()
    path = httpx.URL(link["url"]).path
    sandbox.client.get(path)
    forged = sandbox.client.post(
        path, data={"nonce": "guess", "business_name": "X", "agree": "yes", "decision": "submit"}
    )
    assert forged.status_code == 400
    assert sandbox.call("GET", f"/v1/accounts/{account}").get_json()["charges_enabled"] is False
