"""The API's common rules (docs/payments-notes.md §1, §3.1, §4.1, §6): keys, the account header,
bracket parameters and the error envelope."""

from __future__ import annotations

import base64

from payments_sandbox.params import parse_pairs
from tests.unit.sandbox_payments.harness import Harness, mug


def test_bracket_parameters_nest_into_objects_and_lists() -> None:
    tree = parse_pairs(
        [
            ("line_items[0][price_data][currency]", "usd"),
            ("line_items[0][quantity]", "2"),
            ("line_items[1][quantity]", "1"),
            ("expand[]", "line_items"),
            ("expand[]", "payment_intent"),
            ("metadata[order]", "o-1"),
        ]
    )
    assert tree == {
        "line_items": [{"price_data": {"currency": "usd"}, "quantity": "2"}, {"quantity": "1"}],
        "expand": ["line_items", "payment_intent"],
        "metadata": {"order": "o-1"},
    }


def test_indexed_arrays_keep_their_index_order() -> None:
    assert parse_pairs([("expand[1]", "b"), ("expand[0]", "a")]) == {"expand": ["a", "b"]}


def test_a_call_without_a_key_is_401(sandbox: Harness) -> None:
    response = sandbox.client.get("/v1/accounts/acct_x")
    assert response.status_code == 401
    assert response.get_json()["error"]["type"] == "invalid_request_error"
    assert response.headers["Request-Id"].startswith("req_")


def test_a_wrong_key_is_401_with_the_key_redacted(sandbox: Harness) -> None:
    response = sandbox.call("GET", "/v1/account", api_key="sk_test_notthekey1234")
    assert response.status_code == 401
    message = response.get_json()["error"]["message"]
    assert "sk_test_notthekey1234" not in message
    assert message.endswith("sk_test_********1234")


def test_the_key_as_a_basic_auth_user_name_is_accepted(sandbox: Harness) -> None:
    # curl -u sk_test_...: sends the key as the user name with an empty password
    basic = base64.b64encode(f"{sandbox.config.secret_key}:".encode()).decode()
    response = sandbox.client.get("/v1/account", headers={"Authorization": f"Basic {basic}"})
    assert response.status_code == 200


def test_an_unknown_url_is_the_providers_404(sandbox: Harness) -> None:
    response = sandbox.call("GET", "/v1/charges_of_tomorrow")
    assert response.status_code == 404
    assert response.get_json()["error"]["message"].startswith(
        "Unrecognized request URL (GET: /v1/charges_of_tomorrow)"
    )


def test_an_unknown_parameter_is_refused_with_its_name(sandbox: Harness) -> None:
    account = sandbox.account()
    response = sandbox.call("POST", "/v1/checkout/sessions", mug(success_ur="http://x.test"), account=account)
    assert response.status_code == 400
    error = response.get_json()["error"]
    assert (error["code"], error["param"]) == ("parameter_unknown", "success_ur")


def test_a_missing_product_name_names_the_nested_parameter(sandbox: Harness) -> None:
    account = sandbox.account()
    params = mug(
        line_items=[
            {"price_data": {"currency": "usd", "unit_amount": 100, "product_data": {}}, "quantity": 1}
        ]
    )
    # product_data without a name
    params["line_items"][0]["price_data"]["product_data"] = {"description": "no name"}
    error = sandbox.call("POST", "/v1/checkout/sessions", params, account=account).get_json()["error"]
    assert (error["code"], error["param"]) == (
        "parameter_missing",
        "line_items[0][price_data][product_data][name]",
    )
    assert error["doc_url"].endswith("/error-codes/parameter-missing")


def test_a_non_integer_amount_is_refused(sandbox: Harness) -> None:
    account = sandbox.account()
    params = mug(
        line_items=[
            {
                "price_data": {"currency": "usd", "unit_amount": "12.50", "product_data": {"name": "Mug"}},
                "quantity": 1,
            }
        ]
    )
    error = sandbox.call("POST", "/v1/checkout/sessions", params, account=account).get_json()["error"]
    assert (error["code"], error["param"]) == (
        "parameter_invalid_integer",
        "line_items[0][price_data][unit_amount]",
    )


def test_an_account_header_naming_no_connected_account_is_403(sandbox: Harness) -> None:
    response = sandbox.call("POST", "/v1/checkout/sessions", mug(), account="acct_notconnected")
    assert response.status_code == 403
    assert response.get_json()["error"]["code"] == "account_invalid"


def test_a_session_on_an_account_not_yet_onboarded_is_refused(sandbox: Harness) -> None:
    account = sandbox.account(onboarded=False)
    response = sandbox.call("POST", "/v1/checkout/sessions", mug(), account=account)
    assert response.status_code == 400
    assert "charges_enabled" in response.get_json()["error"]["message"]


def test_a_session_lives_in_the_account_it_was_created_on(sandbox: Harness) -> None:
    mine, other = sandbox.account(), sandbox.account()
    session = sandbox.session(mine)
    # Then under another account, or as the platform, it does not exist
    for account in (other, None):
        response = sandbox.call("GET", f"/v1/checkout/sessions/{session['id']}", account=account)
        assert response.status_code == 404
        assert response.get_json()["error"]["code"] == "resource_missing"
    assert sandbox.call("GET", f"/v1/checkout/sessions/{session['id']}", account=mine).status_code == 200


def test_a_session_totals_its_line_items_in_the_smallest_unit(sandbox: Harness) -> None:
    session = sandbox.session(sandbox.account(), client_reference_id="org-1/p-9", metadata={"product": "p-9"})
    assert (session["amount_total"], session["currency"], session["status"], session["payment_status"]) == (
        2500,
        "usd",
        "open",
        "unpaid",
    )
    assert (session["client_reference_id"], session["metadata"]) == ("org-1/p-9", {"product": "p-9"})
    assert session["id"].startswith("cs_test_")


def test_an_application_fee_without_an_account_header_or_destination_is_refused(sandbox: Harness) -> None:
    response = sandbox.call(
        "POST", "/v1/checkout/sessions", mug(payment_intent_data={"application_fee_amount": 100})
    )
    assert response.status_code == 400
    assert response.get_json()["error"]["param"] == "payment_intent_data[application_fee_amount]"


def test_a_connect_endpoint_gets_connected_accounts_events_and_a_platform_endpoint_does_not(
    sandbox: Harness,
) -> None:
    connect = sandbox.endpoint(["checkout.session.expired"], connect=True)
    own = sandbox.endpoint(["checkout.session.expired"], connect=False)
    account = sandbox.account()
    session = sandbox.session(account)
    sandbox.call("POST", f"/v1/checkout/sessions/{session['id']}/expire", account=account)
    [event] = sandbox.events("checkout.session.expired")
    assert [delivery["endpoint"] for delivery in event["deliveries"]] == [connect["id"]]
    assert own["id"] not in {delivery["endpoint"] for delivery in event["deliveries"]}


def test_an_endpoint_for_an_unknown_event_type_is_refused(sandbox: Harness) -> None:
    response = sandbox.call(
        "POST",
        "/v1/webhook_endpoints",
        {"url": "http://x.test/h", "enabled_events": ["checkout.session.complete"]},
    )
    assert response.status_code == 400
    assert response.get_json()["error"]["param"] == "enabled_events[0]"


def test_the_signing_secret_is_in_the_create_answer_only(sandbox: Harness) -> None:
    created = sandbox.endpoint(["*"])
    read = sandbox.call("GET", f"/v1/webhook_endpoints/{created['id']}").get_json()
    assert created["secret"].startswith("whsec_")
    assert "secret" not in read


def test_the_request_log_shows_the_account_key_and_parameters(sandbox: Harness) -> None:
    account = sandbox.account()
    sandbox.call("POST", "/v1/checkout/sessions", mug(), account=account, key="order-1")
    [entry] = sandbox.admin("GET", "/requests?path=^/v1/checkout/sessions$")["requests"]
    assert (entry["account"], entry["idempotency_key"], entry["status"]) == (account, "order-1", 200)
    assert entry["params"]["line_items"][0]["quantity"] == "2"
