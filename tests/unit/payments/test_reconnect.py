"""Connecting the payments account again after a disconnect (docs/payments-notes.md §2.3): the account the
platform created stays connected to it at the provider whatever the service records, so a reconnect
resumes that account (a new onboarding link for it) instead of creating a second one that would split
the merchant's payouts; a new one only when the merchant asks for it, or when the provider no longer
lets the service act for the old one. A disconnect still stops every new checkout. The collaborators
are simple fakes of the repository, the cipher and the provider (``PaymentsProvider``'s calls)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

import pytest

from shared.errors import Conflict
from shared.payments.checkout import checkout_available
from shared.payments.connection import OnboardingPolicy, PaymentsConnectionService
from shared.payments.provider import OnboardingLink, PaymentsAccountRefused, ProviderAccount
from shared.records.connections import EncryptedSecret
from shared.records.payments import CheckoutRecord, PaymentsConnection

ORG, USER = "org-1", "user-1"
NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


@dataclass
class Store:
    connections: dict[str, PaymentsConnection] = field(default_factory=dict)

    def get_connection(self, org_id: str) -> PaymentsConnection | None:
        found = self.connections.get(org_id)
        return found.model_copy(deep=True) if found else None

    def put_connection(self, connection: PaymentsConnection) -> None:
        self.connections[connection.org_id] = connection.model_copy(deep=True)

    def open_checkouts(self, org_id: str) -> list[CheckoutRecord]:
        return []

    def end_checkout(self, org_id: str, checkout_id: str, state: Literal["expired"], now: datetime) -> bool:
        return True


@dataclass
class States:
    held: dict[str, tuple[str, str]] = field(default_factory=dict)

    def create(self, nonce: str, org_id: str, user_id: str, expires_at: datetime) -> None:
        self.held[nonce] = (org_id, user_id)

    def consume(self, nonce: str, org_id: str, user_id: str) -> dict[str, Any] | None:
        if self.held.pop(nonce, None) != (org_id, user_id):
            return None
        return {"org_id": org_id, "user_id": user_id, "expires_at": (NOW + timedelta(minutes=5)).isoformat()}


class Cipher:
    """Reversible and bound to its context, as the KMS envelope is."""

    def encrypt(self, plaintext: str, context: dict[str, str]) -> EncryptedSecret:
        return EncryptedSecret(ciphertext=plaintext[::-1], encrypted_key=context["org_id"], nonce="n")

    def decrypt(self, secret: EncryptedSecret, context: dict[str, str]) -> str:
        assert secret.encrypted_key == context["org_id"]
        return secret.ciphertext[::-1]


@dataclass
class Provider:
    """The provider's accounts: each create makes a new one; ``refusing`` ones answer 403."""

    accounts: dict[str, bool] = field(default_factory=dict)  # id -> charges enabled
    refusing: set[str] = field(default_factory=set)
    links: list[str] = field(default_factory=list)

    def create_account(self, *, metadata: dict[str, str], idempotency_key: str) -> ProviderAccount:
        account_id = f"acct_{len(self.accounts) + 1:04d}"
        self.accounts[account_id] = False
        return self.retrieve_account(account_id)

    def retrieve_account(self, account_id: str) -> ProviderAccount:
        if account_id in self.refusing:
            raise PaymentsAccountRefused("The payments account no longer lets this service take payments.")
        enabled = self.accounts[account_id]
        return ProviderAccount(
            account_id=account_id,
            charges_enabled=enabled,
            payouts_enabled=enabled,
            details_submitted=enabled,
            currently_due=[] if enabled else ["external_account"],
            disabled_reason=None,
            business_name="Ada's Mugs",
            country="GB",
            default_currency="gbp",
        )

    def onboarding_link(
        self, account_id: str, *, refresh_url: str, return_url: str, idempotency_key: str
    ) -> OnboardingLink:
        self.links.append(account_id)
        return OnboardingLink(
            url=f"https://provider.test/setup/{account_id}", expires_at=NOW + timedelta(minutes=5)
        )

    def onboard(self, account_id: str) -> None:
        self.accounts[account_id] = True


@dataclass
class World:
    store: Store
    provider: Provider
    service: PaymentsConnectionService
    returns: list[str]  # the state each onboarding link's return URL carries

    def connect(self, *, new_account: bool = False) -> str:
        """Press Connect, finish the provider's page and come back: the account onboarded."""
        if new_account:
            self.service.start(ORG, USER, "https://service.test", new_account=True)
        else:
            self.service.start(ORG, USER, "https://service.test")
        account_id = self.provider.links[-1]
        self.provider.onboard(account_id)
        self.service.complete(ORG, USER, self.returns[-1])
        return account_id


@pytest.fixture
def world() -> World:
    store, provider, returns = Store(), Provider(), []
    make_link = provider.onboarding_link

    def link(account_id: str, *, refresh_url: str, return_url: str, idempotency_key: str) -> OnboardingLink:
        returns.append(return_url.split("state=", 1)[1])
        return make_link(
            account_id, refresh_url=refresh_url, return_url=return_url, idempotency_key=idempotency_key
        )

    provider.onboarding_link = link  # type: ignore[method-assign]
    service = PaymentsConnectionService(
        store=store,
        checkouts=store,
        states=States(),
        cipher=Cipher(),
        clock=lambda: NOW,
        provider=provider,  # type: ignore[arg-type]
        policy=OnboardingPolicy(
            callback_page="https://dashboard.test/payments-callback.html", state_key="k" * 32
        ),
    )
    return World(store, provider, service, returns)


def test_reconnecting_after_a_disconnect_resumes_the_same_account(world: World) -> None:
    # Given: a connected account, then disconnected
    first = world.connect()
    world.service.disconnect(ORG)
    # When: the merchant connects again and comes back from the provider's page
    again = world.connect()
    # Then: the link was for the same account, and no second account was created
    assert again == first
    assert list(world.provider.accounts) == [first]
    status = world.service.status(ORG)
    assert (status.status, status.checkout_available, status.account_hint) == ("active", True, first[-4:])


def test_a_disconnected_account_takes_no_checkout_until_the_return_reads_it_again(world: World) -> None:
    # Given: a connected account
    world.connect()
    # When: it is disconnected
    disconnected = world.service.disconnect(ORG)
    # Then: no checkout can start, though the account is kept for a reconnect
    assert (disconnected.status, disconnected.checkout_available) == ("inactive", False)
    assert disconnected.remedy is not None
    assert disconnected.remedy.startswith("Press Reconnect")
    assert not checkout_available(world.store.get_connection(ORG))
    # And pressing Connect alone (before coming back from the provider's page) does not take payments
    world.service.start(ORG, USER, "https://service.test")
    resumed = world.service.status(ORG)
    assert (resumed.status, resumed.checkout_available) == ("onboarding", False)
    assert not checkout_available(world.store.get_connection(ORG))


def test_a_reconnect_left_before_the_providers_pages_are_finished_says_to_finish_them(world: World) -> None:
    # Given: an account that took card payments, disconnected
    world.connect()
    world.service.disconnect(ORG)
    # When: the merchant presses Reconnect and closes the provider's page without finishing it
    world.service.start(ORG, USER, "https://service.test")
    # Then: the page says the account is waiting for those pages, not for a review at the provider,
    # and what the provider says of the account (it takes card payments there) is shown as it is
    status = world.service.status(ORG)
    assert (status.status, status.checkout_available) == ("onboarding", False)
    assert status.message == (
        "Reconnecting: the payments account takes card payments here again once you finish "
        "the payment provider's pages."
    )
    assert status.remedy == "Press Continue setup and finish the provider's pages."
    assert (status.charges_enabled, status.payouts_enabled) == (True, True)
    # And finishing them makes it take payments again
    world.connect()
    assert world.service.status(ORG).checkout_available


def test_asking_for_a_different_account_after_a_disconnect_creates_a_new_one(world: World) -> None:
    # Given: a disconnected account
    first = world.connect()
    world.service.disconnect(ORG)
    # When: the merchant asks for a different account
    second = world.connect(new_account=True)
    # Then: a new account is onboarded and connected; the old one is no longer the organization's
    assert second != first
    assert list(world.provider.accounts) == [first, second]
    assert world.service.status(ORG).account_hint == second[-4:]


def test_a_different_account_is_refused_while_one_is_connected(world: World) -> None:
    # Given: a connected account
    world.connect()
    # When / Then: asking for a different one without disconnecting is refused, and nothing changes
    with pytest.raises(Conflict) as refused:
        world.service.start(ORG, USER, "https://service.test", new_account=True)
    assert refused.value.remedy is not None
    assert refused.value.remedy.startswith("Disconnect the current")
    assert len(world.provider.accounts) == 1
    assert world.service.status(ORG).status == "active"


def test_an_account_that_no_longer_lets_the_service_act_is_replaced_on_reconnect(world: World) -> None:
    # Given: a disconnected account whose holder then cut the platform off at the provider
    first = world.connect()
    world.service.disconnect(ORG)
    world.provider.refusing.add(first)
    # When: the merchant connects again
    second = world.connect()
    # Then: a new account is onboarded (the old one cannot be used)
    assert second != first
    assert world.service.status(ORG).status == "active"


def test_closing_the_organization_destroys_the_kept_account_id(world: World) -> None:
    # Given: a disconnected account whose id is kept for a reconnect
    world.connect()
    world.service.disconnect(ORG)
    assert world.store.connections[ORG].account is not None
    # When: the organization is closed
    stopped = world.service.stop(ORG)
    # Then: nothing was connected to stop, and the account id is gone
    assert stopped is False
    assert world.store.connections[ORG].account is None


def test_the_status_says_what_to_press_on_the_payments_page_not_to_go_there(world: World) -> None:
    # Given: nothing connected (the status is read on the Payments page itself)
    status = world.service.status(ORG)
    # Then: the remedy names the page's button, not the page it is read on
    assert status.remedy == "Press Connect a payments account and finish the payment provider's pages."
    assert "Payments page" not in status.remedy
