"""Expiry (docs/payments-notes.md §2.2, §3.1, §3.3): sessions live 24 hours unless told 30 minutes
to 24 hours, expire by the timer or the API with ``checkout.session.expired``; onboarding links are
single-use and live 300 seconds."""

from __future__ import annotations

import httpx

from tests.unit.sandbox_payments.harness import START, Harness, mug

REFRESH = "http://shop.test/payments/refresh"
RETURN = "http://shop.test/payments/return"


def test_a_session_expires_24_hours_after_creation_by_default(sandbox: Harness) -> None:
    session = sandbox.session(sandbox.account())
    assert session["created"] == int(START)
    assert session["expires_at"] == int(START) + 24 * 3600


def test_expires_at_under_30_minutes_is_refused(sandbox: Harness) -> None:
    account = sandbox.account()
    response = sandbox.call(
        "POST", "/v1/checkout/sessions", mug(expires_at=int(START) + 29 * 60), account=account
    )
    assert response.status_code == 400
    assert response.get_json()["error"]["param"] == "expires_at"


def test_expires_at_over_24_hours_is_refused(sandbox: Harness) -> None:
    account = sandbox.account()
    response = sandbox.call(
        "POST", "/v1/checkout/sessions", mug(expires_at=int(START) + 24 * 3600 + 1), account=account
    )
    assert response.status_code == 400
    assert "24 hours" in response.get_json()["error"]["message"]


def test_a_session_past_expires_at_is_expired_with_one_event(sandbox: Harness) -> None:
    # Given an open session that expires in 30 minutes
    account = sandbox.account()
    session = sandbox.session(account, expires_at=int(START) + 1800)
    # When the clock passes it
    sandbox.advance(1799)
    assert (
        sandbox.call("GET", f"/v1/checkout/sessions/{session['id']}", account=account).get_json()["status"]
        == "open"
    )
    sandbox.advance(1)
    read = sandbox.call("GET", f"/v1/checkout/sessions/{session['id']}", account=account).get_json()
    # Then it is expired, its page's URL is gone, and one checkout.session.expired was sent
    assert (read["status"], read["payment_status"], read["url"]) == ("expired", "unpaid", None)
    expired = sandbox.events("checkout.session.expired")
    assert [(e["account"], e["data"]["object"]["id"]) for e in expired] == [(account, session["id"])]
    sandbox.advance(3600)
    assert len(sandbox.events("checkout.session.expired")) == 1


def test_the_expire_call_expires_an_open_session(sandbox: Harness) -> None:
    account = sandbox.account()
    session = sandbox.session(account)
    response = sandbox.call("POST", f"/v1/checkout/sessions/{session['id']}/expire", account=account)
    assert response.status_code == 200
    assert (response.get_json()["status"], response.get_json()["url"]) == ("expired", None)
    [event] = sandbox.events("checkout.session.expired")
    assert event["request"]["id"] == response.headers["Request-Id"]


def test_expiring_a_session_that_is_not_open_is_refused(sandbox: Harness) -> None:
    account = sandbox.account()
    session = sandbox.session(account)
    sandbox.call("POST", f"/v1/checkout/sessions/{session['id']}/expire", account=account)
    again = sandbox.call("POST", f"/v1/checkout/sessions/{session['id']}/expire", account=account)
    assert again.status_code == 400
    assert '"expired"' in again.get_json()["error"]["message"]


def test_the_page_of_an_expired_session_says_it_is_no_longer_active(sandbox: Harness) -> None:
    account = sandbox.account()
    session = sandbox.session(account)
    sandbox.advance(24 * 3600)
    page = sandbox.client.get(httpx.URL(session["url"]).path)
    assert page.status_code == 410
    assert "no longer active" in page.get_data(as_text=True)


def onboarding_link(sandbox: Harness) -> str:
    account = sandbox.account(onboarded=False)
    link = sandbox.call(
        "POST",
        "/v1/account_links",
        {"account": account, "type": "account_onboarding", "refresh_url": REFRESH, "return_url": RETURN},
    ).get_json()
    assert link["expires_at"] - link["created"] == 300
    return str(httpx.URL(link["url"]).path)


def test_an_onboarding_link_is_single_use(sandbox: Harness) -> None:
    path = onboarding_link(sandbox)
    assert sandbox.client.get(path).status_code == 200
    second = sandbox.client.get(path)
    assert (second.status_code, second.headers["Location"]) == (302, REFRESH)


def test_an_onboarding_link_expires_after_300_seconds(sandbox: Harness) -> None:
    path = onboarding_link(sandbox)
    sandbox.advance(300)
    expired = sandbox.client.get(path)
    assert (expired.status_code, expired.headers["Location"]) == (302, REFRESH)
