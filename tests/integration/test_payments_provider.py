"""The one module that talks to the card-payment provider (shared/payments/provider.py), against the
payments sandbox over real HTTP: the pinned API version, the idempotency key a caller gives, each
attempt bounded by the time left, and the provider's errors as the service's."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
import stripe

from payments_sandbox import PaymentsSandboxServer
from shared.payments.provider import (
    API_VERSION,
    PaymentsAccountRefused,
    PaymentsProvider,
    PaymentsRejected,
    PaymentsUnavailable,
    SignatureRefused,
    verify_delivery,
)

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def sandbox() -> Iterator[PaymentsSandboxServer]:
    with PaymentsSandboxServer() as server:
        yield server


@pytest.fixture
def admin(sandbox: PaymentsSandboxServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=f"{sandbox.url}/_admin", timeout=10) as client:
        client.post("/reset").raise_for_status()
        yield client


def provider(
    sandbox: PaymentsSandboxServer, seconds_left: float = 20.0, key: str | None = None
) -> PaymentsProvider:
    return PaymentsProvider(
        key or sandbox.config.secret_key, api_url=sandbox.url, timeout=lambda: seconds_left, max_retries=2
    )


def requests(admin: httpx.Client, path: str) -> list[dict[str, object]]:
    logged: list[dict[str, object]] = admin.get("/requests", params={"path": path}).json()["requests"]
    return logged


def test_the_api_version_is_the_one_the_pinned_sdk_was_made_for() -> None:
    # A new SDK may speak another version: moving either is one deliberate change.
    assert stripe.api_version == API_VERSION


def test_every_call_sends_the_pinned_version_and_a_create_the_callers_key(
    sandbox: PaymentsSandboxServer, admin: httpx.Client
) -> None:
    # When: an account is created with a key built from a saved record, then read
    created = provider(sandbox).create_account(
        metadata={"org_id": "org-1"}, idempotency_key="payments-account-c1"
    )
    provider(sandbox).retrieve_account(created.account_id)
    # Then: both carried the pinned version; the create carried the caller's key
    [create] = requests(admin, "^/v1/accounts$")
    [read] = requests(admin, f"^/v1/accounts/{created.account_id}$")
    assert (create["stripe_version"], read["stripe_version"]) == (API_VERSION, API_VERSION)
    assert create["idempotency_key"] == "payments-account-c1"
    assert (created.charges_enabled, created.details_submitted) == (False, False)
    assert created.currently_due


def test_a_failing_call_is_retried_while_the_time_left_allows(
    sandbox: PaymentsSandboxServer, admin: httpx.Client
) -> None:
    # Given: the provider fails twice, then answers
    admin.post("/faults", json={"kind": "unavailable", "path": "^/v1/accounts$", "count": 2})
    # When: the account is created with plenty of time left
    created = provider(sandbox).create_account(metadata={}, idempotency_key="payments-account-c2")
    # Then: the SDK retried, with the same key, until it got through
    assert [entry["status"] for entry in requests(admin, "^/v1/accounts$")] == [500, 500, 200]
    assert created.account_id.startswith("acct_")


def test_no_retry_is_made_when_its_wait_and_an_attempt_would_not_fit(
    sandbox: PaymentsSandboxServer, admin: httpx.Client
) -> None:
    # Given: the provider fails once, and the invocation has 1.2 s left
    admin.post("/faults", json={"kind": "unavailable", "path": "^/v1/accounts$"})
    # When / Then: the failure is told at once as "try again later"
    with pytest.raises(PaymentsUnavailable):
        provider(sandbox, seconds_left=1.2).create_account(metadata={}, idempotency_key="payments-account-c3")
    assert [entry["status"] for entry in requests(admin, "^/v1/accounts$")] == [500]


def test_an_answer_slower_than_the_time_left_is_given_up_as_unavailable(
    sandbox: PaymentsSandboxServer, admin: httpx.Client
) -> None:
    # Given: the provider holds its answer 3 s, and 0.5 s is left
    admin.post("/faults", json={"kind": "delay", "path": "^/v1/accounts$", "seconds": 3})
    # When / Then
    with pytest.raises(PaymentsUnavailable):
        provider(sandbox, seconds_left=0.5).create_account(metadata={}, idempotency_key="payments-account-c4")


def test_the_providers_refusals_are_the_services_errors(
    sandbox: PaymentsSandboxServer, admin: httpx.Client
) -> None:
    # A key the provider does not know: the operator's to fix
    with pytest.raises(PaymentsRejected, match="refused the service's key"):
        provider(sandbox, key="sk_test_not_the_platform").retrieve_account("acct_1")
    # An account the platform cannot act for: the merchant's to reconnect
    with pytest.raises(PaymentsAccountRefused):
        provider(sandbox).expire_session("acct_not_connected", "cs_test_1")
    # Too many requests: try again later
    admin.post("/faults", json={"kind": "rate_limit", "path": "^/v1/accounts"})
    with pytest.raises(PaymentsUnavailable):
        provider(sandbox).retrieve_account("acct_1")


def test_a_delivery_is_verified_on_its_raw_body_and_a_changed_or_stale_one_refused() -> None:
    body = b'{\n  "id": "evt_1",\n  "type": "checkout.session.completed"\n}'
    secret = "whsec_test"
    header = stripe.WebhookSignature.generate_signature_header(body.decode(), secret)
    assert verify_delivery(body, header, secret)["id"] == "evt_1"
    with pytest.raises(SignatureRefused):
        verify_delivery(body.replace(b"evt_1", b"evt_2"), header, secret)
    old = stripe.WebhookSignature.generate_signature_header(body.decode(), secret, timestamp=1_000_000_000)
    with pytest.raises(SignatureRefused, match="tolerance"):
        verify_delivery(body, old, secret)
    with pytest.raises(SignatureRefused):
        verify_delivery(body, None, secret)


def test_no_delivery_verifies_while_the_endpoint_secret_is_not_configured() -> None:
    # Given: a delivery signed with an empty secret (the template's value until the operator sets it)
    body = b'{"id": "evt_1", "type": "checkout.session.completed"}'
    header = stripe.WebhookSignature.generate_signature_header(body.decode(), "")
    # When / Then: it is refused, though its HMAC is what an empty key gives
    with pytest.raises(SignatureRefused, match="no webhook signing secret"):
        verify_delivery(body, header, "")
