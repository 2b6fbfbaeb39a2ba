"""Idempotency keys (docs/payments-notes.md §5): the same key and parameters replay the first
answer; the same key with other parameters is the provider's ``idempotency_error``."""

from __future__ import annotations

import threading
import time

from tests.unit.sandbox_payments.harness import Harness, mug


def sessions_held(sandbox: Harness) -> int:
    return len(sandbox.admin("GET", "/state")["checkout_sessions"])


def test_the_same_key_and_parameters_replay_the_first_answer(sandbox: Harness) -> None:
    account = sandbox.account()
    # When the same create is sent twice with one key
    first = sandbox.call("POST", "/v1/checkout/sessions", mug(), account=account, key="order-1")
    second = sandbox.call("POST", "/v1/checkout/sessions", mug(), account=account, key="order-1")
    # Then the second is the first's answer, marked as a replay, and one session exists
    assert second.status_code == 200
    assert second.get_json() == first.get_json()
    assert second.headers["Idempotent-Replayed"] == "true"
    assert "Idempotent-Replayed" not in first.headers
    assert sessions_held(sandbox) == 1


def test_the_same_key_with_other_parameters_is_an_idempotency_error(sandbox: Harness) -> None:
    account = sandbox.account()
    sandbox.call("POST", "/v1/checkout/sessions", mug(), account=account, key="order-1")
    # When the key is reused for another quantity
    other = mug(
        line_items=[
            {
                "price_data": {"currency": "usd", "unit_amount": 1250, "product_data": {"name": "Mug"}},
                "quantity": 3,
            }
        ]
    )
    response = sandbox.call("POST", "/v1/checkout/sessions", other, account=account, key="order-1")
    # Then it is refused with the provider's error, and nothing new is created
    assert response.status_code == 400
    error = response.get_json()["error"]
    assert error["type"] == "idempotency_error"
    assert "order-1" in error["message"]
    assert sessions_held(sandbox) == 1


def test_the_same_key_on_another_path_is_an_idempotency_error(sandbox: Harness) -> None:
    account = sandbox.account()
    session = sandbox.session(account)
    sandbox.call("POST", f"/v1/checkout/sessions/{session['id']}/expire", account=account, key="k")
    response = sandbox.call("POST", "/v1/checkout/sessions", mug(), account=account, key="k")
    assert response.get_json()["error"]["type"] == "idempotency_error"


def test_a_request_refused_by_validation_is_not_saved(sandbox: Harness) -> None:
    account = sandbox.account()
    # Given a create refused for a missing product name
    broken = mug(line_items=[{"price_data": {"currency": "usd", "unit_amount": 1250}, "quantity": 1}])
    refused = sandbox.call("POST", "/v1/checkout/sessions", broken, account=account, key="order-1")
    assert refused.status_code == 400
    # When it is sent again, corrected, with the same key
    fixed = sandbox.call("POST", "/v1/checkout/sessions", mug(), account=account, key="order-1")
    # Then it runs: validation failures leave the key free
    assert fixed.status_code == 200
    assert "Idempotent-Replayed" not in fixed.headers


def test_a_lost_answer_is_recovered_by_retrying_with_the_same_key(sandbox: Harness) -> None:
    account = sandbox.account()
    # Given the create runs but its answer is lost to a 500
    sandbox.admin("POST", "/faults", {"kind": "lost_answer", "path": "^/v1/checkout/sessions$"})
    lost = sandbox.call("POST", "/v1/checkout/sessions", mug(), account=account, key="order-1")
    assert lost.status_code == 500
    assert lost.get_json()["error"]["type"] == "api_error"
    # When the caller retries with the same key
    retried = sandbox.call("POST", "/v1/checkout/sessions", mug(), account=account, key="order-1")
    # Then it gets the session that was made, and only one exists
    assert retried.status_code == 200
    assert retried.headers["Idempotent-Replayed"] == "true"
    assert sessions_held(sandbox) == 1
    assert retried.get_json()["id"] == sandbox.admin("GET", "/state")["checkout_sessions"][0]["id"]


def test_a_500_answered_while_running_is_replayed_including_the_error(sandbox: Harness) -> None:
    # Given an outage before the endpoint runs is not saved ...
    account = sandbox.account()
    sandbox.admin("POST", "/faults", {"kind": "unavailable", "path": "^/v1/checkout/sessions$"})
    unavailable = sandbox.call("POST", "/v1/checkout/sessions", mug(), account=account, key="order-1")
    assert unavailable.status_code == 500
    # ... then the retry with the same key runs the request
    retried = sandbox.call("POST", "/v1/checkout/sessions", mug(), account=account, key="order-1")
    assert retried.status_code == 200
    assert "Idempotent-Replayed" not in retried.headers


def test_a_key_is_pruned_after_24_hours_and_then_runs_anew(sandbox: Harness) -> None:
    account = sandbox.account()
    first = sandbox.call("POST", "/v1/checkout/sessions", mug(), account=account, key="order-1")
    # When the same request comes a day later
    sandbox.advance(24 * 3600)
    later = sandbox.call("POST", "/v1/checkout/sessions", mug(), account=account, key="order-1")
    # Then it is a new request with a new session
    assert later.status_code == 200
    assert later.get_json()["id"] != first.get_json()["id"]
    assert "Idempotent-Replayed" not in later.headers


def test_keys_are_scoped_to_the_account_the_call_acts_as(sandbox: Harness) -> None:
    first, second = sandbox.account(), sandbox.account()
    one = sandbox.call("POST", "/v1/checkout/sessions", mug(), account=first, key="order-1")
    two = sandbox.call("POST", "/v1/checkout/sessions", mug(), account=second, key="order-1")
    assert two.status_code == 200
    assert one.get_json()["id"] != two.get_json()["id"]


def test_a_key_longer_than_255_characters_is_refused(sandbox: Harness) -> None:
    account = sandbox.account()
    response = sandbox.call("POST", "/v1/checkout/sessions", mug(), account=account, key="k" * 256)
    assert response.status_code == 400
    assert response.get_json()["error"]["type"] == "invalid_request_error"


def test_a_key_on_a_get_is_ignored(sandbox: Harness) -> None:
    account = sandbox.account()
    session = sandbox.session(account)
    sandbox.call("GET", f"/v1/checkout/sessions/{session['id']}", account=account, key="k")
    # Then the key is still free for a POST with other parameters
    assert sandbox.call("POST", "/v1/checkout/sessions", mug(), account=account, key="k").status_code == 200


def test_a_key_in_use_by_a_running_request_is_a_conflict(sandbox: Harness) -> None:
    account = sandbox.account()
    # Given a create that takes a second (room for the twin to arrive on a loaded machine)
    sandbox.admin("POST", "/faults", {"kind": "delay", "seconds": 1.0, "path": "^/v1/checkout/sessions$"})
    slow: list[int] = []
    thread = threading.Thread(
        target=lambda: slow.append(
            sandbox.call("POST", "/v1/checkout/sessions", mug(), account=account, key="order-1").status_code
        )
    )
    thread.start()
    # When its twin arrives meanwhile
    deadline = time.monotonic() + 5
    while sandbox.state.idempotency.in_use() == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    twin = sandbox.call("POST", "/v1/checkout/sessions", mug(), account=account, key="order-1")
    thread.join()
    # Then the twin is a 409 the SDK retries, and the slow one made the only session
    assert twin.status_code == 409
    assert twin.get_json()["error"]["code"] == "idempotency_key_in_use"
    assert slow == [200]
    assert sessions_held(sandbox) == 1
