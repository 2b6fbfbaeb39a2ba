"""Connecting an organization's card-payment account: onboarding on the provider's own pages and
back, its status, and disconnecting (docs/payments-notes.md §2).

As the provider's sample for standard accounts does: the service creates the merchant's account,
sends the browser to a single-use onboarding link, and on return reads the account, because coming
back is no proof that onboarding finished. The link returns to the dashboard's
``payments-callback.html`` with a ``state`` that is signed for the user who pressed Connect in their
organization, expires, and works once (``shared.connections.oauth_state``, the ad-account
connection's own): the page posts it with the signed-in user's JWT, so a link started by someone
else, or used twice, completes nothing. The account itself always comes from the organization's
record, never from the browser, and is stored encrypted like a platform token.
"""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal, Protocol

from pydantic import Field

from shared.clock import Clock
from shared.connections.oauth_state import StateOwner, StateStore, consume_state, issue_state
from shared.errors import Conflict, NotFound
from shared.observability import logger
from shared.payments.provider import (
    PaymentsAccountRefused,
    PaymentsProvider,
    ProviderAccount,
)
from shared.records.connections import EncryptedSecret
from shared.records.payments import CheckoutRecord, PaymentsConnection
from shared.wire_models import CamelModel

NOT_CONNECTED = "No payments account is connected."
# Shown on the Payments page itself (its status, its Disconnect): the button to press, not the page.
CONNECT_REMEDY = "Press Connect a payments account and finish the payment provider's pages."
RECONNECT_REMEDY = (
    "Press Reconnect to take card payments again on the same account, or Connect a different account."
)
CONTINUE_REMEDY = "Press Continue setup and finish the provider's pages."

# The provider's requirement names, by prefix, in words a merchant acts on.
REQUIREMENT_WORDS: tuple[tuple[str, str], ...] = (
    ("business_profile", "business details (website and industry)"),
    ("business_type", "the type of business"),
    ("company", "company details"),
    ("external_account", "a bank account for payouts"),
    ("representative", "details of the person representing the business"),
    ("individual", "the account holder's personal details"),
    ("person_", "details of the business's people"),
    ("owners", "details of the business's owners"),
    ("directors", "details of the business's directors"),
    ("executives", "details of the business's executives"),
    ("tos_acceptance", "acceptance of the provider's services agreement"),
)


class ConnectionStore(Protocol):
    def get_connection(self, org_id: str) -> PaymentsConnection | None: ...
    def put_connection(self, connection: PaymentsConnection) -> None: ...


class OpenCheckouts(Protocol):
    """The checkouts a disconnect must close (``DynamoPaymentsStore``)."""

    def open_checkouts(self, org_id: str) -> list[CheckoutRecord]: ...
    def end_checkout(
        self, org_id: str, checkout_id: str, state: Literal["expired"], now: datetime
    ) -> bool: ...


class SecretCipher(Protocol):
    """Encrypts a value bound to a context; decrypting under another context fails."""

    def encrypt(self, plaintext: str, context: dict[str, str]) -> EncryptedSecret: ...
    def decrypt(self, secret: EncryptedSecret, context: dict[str, str]) -> str: ...


@dataclass(frozen=True)
class OnboardingPolicy:
    """Where onboarding comes back to (the dashboard's page) and the key that signs its states (only
    the functions that start or finish onboarding know them)."""

    callback_page: str
    state_key: str
    state_ttl: timedelta = timedelta(minutes=30)


class ConnectRequest(CamelModel):
    """``POST /payments/connect``'s optional body."""

    new_account: bool = Field(
        default=False,
        description="After a disconnect, onboard a new payments account instead of resuming the one "
        "connected before (which stays the merchant's, with the provider). Refused (409) while an "
        "account is connected.",
    )


class OnboardingStart(CamelModel):
    onboarding_url: str = Field(description="The provider's onboarding page: open it in the browser.")
    expires_at: datetime = Field(description="The link works once, until then.")


class PaymentsStatusView(CamelModel):
    """``GET /payments/status``: the payments account and whether the hosted checkout can take
    payments, or what is missing."""

    connected: bool = Field(description="An account is connected (onboarding or active).")
    status: Literal["not_connected", "onboarding", "active", "inactive"]
    charges_enabled: bool = False
    payouts_enabled: bool = False
    details_submitted: bool = False
    missing: list[str] = Field(
        default_factory=list, description="What the provider still needs before it enables charges."
    )
    disabled_reason: str | None = None
    business_name: str | None = None
    country: str | None = None
    default_currency: str | None = None
    account_hint: str | None = Field(default=None, description="The account id's last four characters.")
    started_at: datetime | None = None
    connected_at: datetime | None = None
    checked_at: datetime | None = None
    disconnected_at: datetime | None = None
    checkout_available: bool = Field(description="The hosted quick-pay checkout can take payments.")
    message: str
    remedy: str | None = None


def missing_in_words(currently_due: list[str]) -> list[str]:
    """The provider's ``currently_due`` requirement names as what a merchant must provide, each once,
    in the provider's order."""
    words: list[str] = []
    for requirement in currently_due:
        text = next(
            (said for prefix, said in REQUIREMENT_WORDS if requirement.startswith(prefix)),
            requirement.replace("_", " ").replace(".", ": "),
        )
        if text not in words:
            words.append(text)
    return words


@dataclass
class PaymentsConnectionService:
    """The payments connection for one request; collaborators are passed in. A function that only
    shows the status gets neither ``provider`` nor ``policy`` (it needs no secret)."""

    store: ConnectionStore
    checkouts: OpenCheckouts
    states: StateStore
    cipher: SecretCipher
    clock: Clock
    provider: PaymentsProvider | None = None
    policy: OnboardingPolicy | None = None

    def start(
        self, org_id: str, user_id: str, service_url: str | None = None, *, new_account: bool = False
    ) -> OnboardingStart:
        """A single-use onboarding link for the organization's account, created on first use, which
        comes back to the dashboard with a state only ``user_id`` can complete. ``service_url`` is the
        address the request came to (the hosted checkout's pages are under it).

        After a disconnect the account connected before is resumed (a new link for the same account),
        as long as the provider still lets the service act for it: an account the platform created
        stays connected to the platform at the provider whatever the service records, so a second one
        would only split the merchant's payouts (docs/payments-notes.md §2.3). ``new_account`` asks
        for a new account instead (the old one stays the merchant's); refused (409) while an account
        is connected, which must be disconnected first.

        The record is saved before the account is created and names the create's idempotency key,
        so a retry after a lost answer finds the same account instead of making a second one."""
        now = self.clock()
        connection = self.store.get_connection(org_id)
        if new_account and connection is not None and connection.status != "inactive":
            raise Conflict(
                "A payments account is connected: a different one can only be connected after it.",
                remedy="Disconnect the current payments account first, then connect a different one.",
            )
        if connection is not None and connection.status == "inactive":
            connection = self._resumed(connection, user_id, now, service_url, new_account)
        if connection is None:
            connection = PaymentsConnection(
                org_id=org_id,
                connection_id=str(uuid.uuid4()),
                status="onboarding",
                started_by=user_id,
                started_at=now,
                checkout_base_url=service_url,
            )
            self.store.put_connection(connection)
        if service_url and connection.checkout_base_url != service_url:
            connection.checkout_base_url = service_url
            self.store.put_connection(connection)
        provider, policy = self._provider(), self._policy()
        if connection.account is None:
            account = provider.create_account(
                metadata={"org_id": org_id, "connection_id": connection.connection_id},
                idempotency_key=f"payments-account-{connection.connection_id}",
            )
            connection.account = self.cipher.encrypt(account.account_id, connection.account_context())
            _apply(connection, account, now)
            self.store.put_connection(connection)
            logger.info("payments account created", extra={"org_id": org_id})
        account_id = self.account_id(connection)
        owner = StateOwner(org_id, user_id)
        state = issue_state(self.states, policy.state_key, owner, now, policy.state_ttl)
        page = policy.callback_page
        link = provider.onboarding_link(
            account_id,
            refresh_url=f"{page}?refresh=1",
            return_url=f"{page}?state={state}",
            idempotency_key=f"payments-onboarding-{hashlib.sha256(state.encode()).hexdigest()[:40]}",
        )
        return OnboardingStart(
            onboarding_url=link.url, expires_at=min(link.expires_at, now + policy.state_ttl)
        )

    def complete(self, org_id: str, user_id: str, state: str) -> PaymentsStatusView:
        """Back from onboarding: check the state was issued to the signed-in ``user_id`` of
        ``org_id`` (and consume it), then read the account from the provider and record where it
        stands. Raises ``Forbidden`` for a state issued to someone else, ``ValidationFailed`` for an
        expired or used one; nothing is read or changed then."""
        owner = StateOwner(org_id, user_id)
        consume_state(self.states, self._policy().state_key, state, owner, self.clock())
        connection = self._connected(org_id)
        account = self._provider().retrieve_account(self.account_id(connection))
        was_active = connection.status == "active"
        _apply(connection, account, self.clock())
        self.store.put_connection(connection)
        if connection.status == "active" and not was_active:
            logger.info("payments connected", extra={"org_id": org_id})
        return self.status(org_id)

    def status(self, org_id: str) -> PaymentsStatusView:
        """Where the organization's payments account stands, from its record."""
        return status_view(self.store.get_connection(org_id))

    def disconnect(self, org_id: str, *, forget: bool = False) -> PaymentsStatusView:
        """Stop taking payments: the checkouts still open are expired on the provider (nobody can pay
        them any more) and the connection is inactive, so no checkout starts and no event of the
        account is acted on until the merchant connects again. The account id stays in the record
        (encrypted) so that connecting again resumes the same account (``start``); ``forget``
        destroys it (the organization is being closed). The merchant's account itself stays theirs,
        with the provider."""
        connection = self._connected(org_id)
        if connection.account is not None:
            self._expire_open_checkouts(connection)
        now = self.clock()
        connection.status = "inactive"
        if forget:
            connection.account = None
            connection.account_hint = None
        connection.charges_enabled = connection.payouts_enabled = False
        connection.disconnected_at = now
        self.store.put_connection(connection)
        logger.info("payments disconnected", extra={"org_id": org_id})
        return self.status(org_id)

    def stop(self, org_id: str) -> bool:
        """Stop taking payments for an organization being closed: ``disconnect`` when an account is
        connected (its open checkouts expired on the provider, the account id destroyed); False when
        there was none (never connected, or disconnected already: an account id kept for a reconnect
        is destroyed then), so a repeat does nothing."""
        connection = self.store.get_connection(org_id)
        if connection is None:
            return False
        if connection.status == "inactive":
            if connection.account is not None:
                connection.account = None
                connection.account_hint = None
                self.store.put_connection(connection)
            return False
        self.disconnect(org_id, forget=True)
        return True

    def account_id(self, connection: PaymentsConnection) -> str:
        """The connection's account id, decrypted under its own organization's context."""
        if connection.account is None:
            raise NotFound(NOT_CONNECTED, remedy=CONNECT_REMEDY)
        return self.cipher.decrypt(connection.account, connection.account_context())

    def record_account(self, connection: PaymentsConnection, account: ProviderAccount) -> None:
        """Record what the provider says of the connection's account now (an ``account.updated``)."""
        _apply(connection, account, self.clock())
        self.store.put_connection(connection)

    def _resumed(
        self,
        connection: PaymentsConnection,
        user_id: str,
        now: datetime,
        service_url: str | None,
        new_account: bool,
    ) -> PaymentsConnection | None:
        """A disconnected connection taken up again with its account (read from the provider, which
        must still let the service act for it), onboarding until the return reads it again; None when
        a new account is asked for, or the old one refuses the service (or is gone)."""
        if connection.account is None or new_account:
            return None
        try:
            account = self._provider().retrieve_account(self.account_id(connection))
        except PaymentsAccountRefused:
            logger.info(
                "payments account refused a reconnect: a new one", extra={"org_id": connection.org_id}
            )
            return None
        # What the provider says of the account is recorded as it is (it may take card payments
        # there), but the connection is not active until the return reads it again.
        _apply(connection, account, now)
        connection.status = "onboarding"
        connection.started_by, connection.started_at = user_id, now
        connection.disconnected_at = None
        connection.checkout_base_url = service_url or connection.checkout_base_url
        self.store.put_connection(connection)
        logger.info("payments account resumed", extra={"org_id": connection.org_id})
        return connection

    def _provider(self) -> PaymentsProvider:
        assert self.provider is not None, "this function's wiring gives no payments provider"
        return self.provider

    def _policy(self) -> OnboardingPolicy:
        assert self.policy is not None, "this function's wiring gives no onboarding policy"
        return self.policy

    def _connected(self, org_id: str) -> PaymentsConnection:
        connection = self.store.get_connection(org_id)
        if connection is None or connection.status == "inactive":
            raise NotFound(NOT_CONNECTED, remedy=CONNECT_REMEDY)
        return connection

    def _expire_open_checkouts(self, connection: PaymentsConnection) -> None:
        open_ones = [c for c in self.checkouts.open_checkouts(connection.org_id) if c.session_id]
        if not open_ones:
            return
        account_id = self.account_id(connection)
        provider = self._provider()
        for checkout in open_ones:
            assert checkout.session_id is not None
            try:
                provider.expire_session(account_id, checkout.session_id)
            except PaymentsAccountRefused:
                return  # the merchant already cut the service off: nothing of theirs can be expired
            self.checkouts.end_checkout(connection.org_id, checkout.checkout_id, "expired", self.clock())


def _apply(connection: PaymentsConnection, account: ProviderAccount, now: datetime) -> None:
    connection.account_hint = account.account_id[-4:]
    connection.charges_enabled = account.charges_enabled
    connection.payouts_enabled = account.payouts_enabled
    connection.details_submitted = account.details_submitted
    connection.currently_due = list(account.currently_due)
    connection.disabled_reason = account.disabled_reason
    connection.business_name = account.business_name
    connection.country = account.country
    connection.default_currency = account.default_currency
    connection.checked_at = now
    if account.charges_enabled:
        connection.status = "active"
        connection.connected_at = connection.connected_at or now
    else:
        connection.status = "onboarding"


def status_view(connection: PaymentsConnection | None) -> PaymentsStatusView:
    """The status the dashboard shows, with what to do next."""
    if connection is None:
        return PaymentsStatusView(
            connected=False,
            status="not_connected",
            checkout_available=False,
            message=NOT_CONNECTED,
            remedy=CONNECT_REMEDY,
        )
    missing = missing_in_words(connection.currently_due)
    if connection.status == "inactive":
        message, remedy = "The payments account is disconnected.", CONNECT_REMEDY
        if connection.account is not None:
            remedy = RECONNECT_REMEDY
    elif connection.status == "onboarding" and connection.charges_enabled:
        # Only a reconnect is onboarding with charges enabled (``_resumed``): ``_apply`` makes such
        # an account active.
        message = (
            "Reconnecting: the payments account takes card payments here again once you finish "
            "the payment provider's pages."
        )
        remedy = CONTINUE_REMEDY
    elif connection.charges_enabled:
        message, remedy = "The payments account takes card payments.", None
    elif missing:
        message = f"The payment provider still needs: {', '.join(missing)}."
        remedy = CONTINUE_REMEDY
    else:
        message = "The payment provider is reviewing the account; charges are not enabled yet."
        remedy = "Wait for the provider's review, or press Continue setup to check what it needs."
    return PaymentsStatusView(
        connected=connection.status != "inactive",
        status=connection.status,
        charges_enabled=connection.charges_enabled,
        payouts_enabled=connection.payouts_enabled,
        details_submitted=connection.details_submitted,
        missing=missing if connection.status != "inactive" else [],
        disabled_reason=connection.disabled_reason if connection.status != "inactive" else None,
        business_name=connection.business_name,
        country=connection.country,
        default_currency=connection.default_currency,
        account_hint=connection.account_hint,
        started_at=connection.started_at,
        connected_at=connection.connected_at,
        checked_at=connection.checked_at,
        disconnected_at=connection.disconnected_at,
        checkout_available=connection.status == "active" and connection.charges_enabled,
        message=message,
        remedy=remedy,
    )
