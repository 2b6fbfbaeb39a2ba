"""The connection service: connecting an ad account through OAuth, keeping its token healthy,
handing it out, and disconnecting.

The service's stores and cipher are in-memory fakes of its protocols; the platform is the sandbox in
process (its OAuth dialog, token exchanges and ``debug_token``), reached through a real Graph client.
The service reads the sandbox's clock, so token lifetimes on both sides agree.
"""

from __future__ import annotations

import base64
import json
import os
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import parse_qs, parse_qsl, urlparse

import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from shared.connections.lifecycle import ConnectionPolicy, ConnectionService, ConnectStart
from shared.errors import Forbidden, NotFound, ValidationFailed
from shared.platform.accounts import list_ad_accounts
from shared.platform.errors import AppDomainNotAllowed, DevelopmentModePermissions, ReconnectRequired
from shared.records.connections import Connection, EncryptedSecret
from tests.unit.sandbox_platform import AD_ACCOUNT_ID, SandboxPlatform

ORG = "org-1"
USER = "user-1"
REDIRECT_URI = "https://dashboard.shop.example/connect-callback.html"
DAY = 24 * 3600


class MemoryConnections:
    """``ConnectionStore`` in memory; stores copies, and usage is only recorded on a stored connection."""

    def __init__(self) -> None:
        self.items: dict[str, Connection] = {}

    def put(self, connection: Connection) -> None:
        self.items[connection.org_id] = connection.model_copy(deep=True)

    def get(self, org_id: str) -> Connection | None:
        connection = self.items.get(org_id)
        return connection.model_copy(deep=True) if connection else None

    def record_usage(self, org_id: str, usage: dict[str, Any], now: datetime) -> None:
        stored = self.items[org_id]  # DynamoDB's condition: the connection exists
        self.items[org_id] = stored.model_copy(update={"usage": usage, "usage_captured_at": now})

    def record_token_rejected(
        self, org_id: str, connected_at: datetime | None, error: str, now: datetime
    ) -> None:
        stored = self.items.get(org_id)
        if stored is None or stored.connected_at != connected_at:
            return  # DynamoDB's condition: the same connection
        update = {"token_health": "invalid", "validation_error": error, "last_validated_at": now}
        self.items[org_id] = stored.model_copy(update=update)


class MemoryStates:
    """``StateStore`` in memory: a nonce is consumed once."""

    def __init__(self) -> None:
        self.items: dict[str, dict[str, Any]] = {}

    def create(self, nonce: str, org_id: str, user_id: str, expires_at: datetime) -> None:
        self.items[nonce] = {"org_id": org_id, "user_id": user_id, "expires_at": expires_at}

    def consume(self, nonce: str, org_id: str, user_id: str) -> dict[str, Any] | None:
        stored = self.items.get(nonce)
        if stored is None or (stored["org_id"], stored["user_id"]) != (org_id, user_id):
            return None  # DynamoDB's condition: the state exists and belongs to this user
        return self.items.pop(nonce)


class AesTokenCipher:
    """``TokenCipher``: AES-GCM under one local key with the context as associated data, so, as with
    the KMS envelope, a secret only decrypts under the context it was encrypted with."""

    def __init__(self) -> None:
        self._aes = AESGCM(AESGCM.generate_key(bit_length=256))

    def encrypt(self, plaintext: str, context: dict[str, str]) -> EncryptedSecret:
        nonce = os.urandom(12)
        ciphertext = self._aes.encrypt(
            nonce, plaintext.encode(), json.dumps(context, sort_keys=True).encode()
        )
        return EncryptedSecret(
            ciphertext=base64.b64encode(ciphertext).decode(),
            encrypted_key=base64.b64encode(b"local test key").decode(),
            nonce=base64.b64encode(nonce).decode(),
        )

    def decrypt(self, secret: EncryptedSecret, context: dict[str, str]) -> str:
        plaintext = self._aes.decrypt(
            base64.b64decode(secret.nonce),
            base64.b64decode(secret.ciphertext),
            json.dumps(context, sort_keys=True).encode(),
        )
        return plaintext.decode()


@pytest.fixture
def platform() -> SandboxPlatform:
    return SandboxPlatform()


@pytest.fixture
def connections() -> MemoryConnections:
    return MemoryConnections()


@pytest.fixture
def states() -> MemoryStates:
    return MemoryStates()


@pytest.fixture
def cipher() -> AesTokenCipher:
    return AesTokenCipher()


@pytest.fixture
def service(
    platform: SandboxPlatform, connections: MemoryConnections, states: MemoryStates, cipher: AesTokenCipher
) -> ConnectionService:
    policy = ConnectionPolicy(
        dialog_url="http://graph.sandbox.test",
        api_version="v25.0",
        redirect_uri=REDIRECT_URI,
        state_key="state-signing-key",
    )
    return ConnectionService(
        connections=connections,
        states=states,
        cipher=cipher,
        graph=platform.graph(),
        policy=policy,
        clock=lambda: datetime.fromtimestamp(platform.state.clock.now(), UTC),
    )


def decide(
    platform: SandboxPlatform, started: ConnectStart, *, approve: bool = True, scope: str | None = None
) -> dict[str, str]:
    """The user's decision on the platform's dialog: the query the platform redirects back with."""
    query = parse_qs(urlparse(started.authorization_url).query)
    decision: dict[str, Any] = {
        "redirect_uri": query["redirect_uri"][0],
        "state": query["state"][0],
        "approve": approve,
    }
    if scope is not None:
        decision["scope"] = scope
    location = platform.admin("POST", "/oauth/approve", decision)["location"]
    return dict(parse_qsl(urlparse(location).query))


def complete(
    service: ConnectionService, callback: dict[str, str], *, org_id: str = ORG, user_id: str = USER
) -> Connection:
    """The dashboard's callback page posting what the platform sent back, with the user's JWT."""
    return service.complete(
        org_id=org_id,
        user_id=user_id,
        state=callback["state"],
        code=callback.get("code"),
        error=callback.get("error"),
        error_reason=callback.get("error_reason"),
    )


def connected(service: ConnectionService, platform: SandboxPlatform) -> Connection:
    return complete(service, decide(platform, service.start(ORG, USER)))


def debug_token_calls(platform: SandboxPlatform) -> int:
    return len(platform.calls(r"^/debug_token$"))


# --- connecting ------------------------------------------------------------------------------------


def test_connecting_keeps_the_business_account_and_only_an_encrypted_long_lived_token(
    service: ConnectionService,
    platform: SandboxPlatform,
    connections: MemoryConnections,
    cipher: AesTokenCipher,
) -> None:
    # Given a user who approves the platform's dialog
    started = service.start(ORG, USER)

    # When the platform sends the user back with a code
    connection = complete(service, decide(platform, started))

    # Then the business ad account is connected and the token is kept encrypted, bound to the org
    stored = connections.get(ORG)
    assert stored == connection
    assert (stored.status, stored.ad_account_id, stored.business_name) == (
        "active",
        AD_ACCOUNT_ID,
        "Sandbox Shop Ltd",
    )
    assert (stored.connected_by, stored.token_health) == (USER, "valid")
    assert stored.token is not None
    token = cipher.decrypt(stored.token, stored.token_context())
    assert token not in stored.model_dump_json()
    # And the token is the long-lived one (about 60 days), and it works on the platform
    assert stored.connected_at is not None
    assert stored.token_expires_at is not None
    assert stored.token_expires_at - stored.connected_at > timedelta(days=59)
    assert [account.id for account in list_ad_accounts(platform.graph(token))] == [AD_ACCOUNT_ID]


def test_the_authorization_link_expires_with_its_state(
    service: ConnectionService, platform: SandboxPlatform
) -> None:
    # Given / When
    started = service.start(ORG, USER)

    # Then
    now = datetime.fromtimestamp(platform.state.clock.now(), UTC)
    assert timedelta(minutes=9) < started.expires_at - now <= timedelta(minutes=10)
    query = parse_qs(urlparse(started.authorization_url).query)
    assert query["redirect_uri"] == [REDIRECT_URI]
    assert set(query["scope"][0].split(",")) >= {"ads_management", "ads_read", "business_management"}


def test_a_state_is_accepted_once(service: ConnectionService, platform: SandboxPlatform) -> None:
    # Given a callback that was already completed
    callback = decide(platform, service.start(ORG, USER))
    complete(service, callback)
    exchanges = len(platform.calls(r"/oauth/access_token$"))

    # When the same callback comes again
    with pytest.raises(ValidationFailed) as raised:
        complete(service, callback)

    # Then it is refused before any exchange with the platform
    assert (raised.value.field, raised.value.remedy) == (
        "state",
        "Start connecting again from the dashboard.",
    )
    assert len(platform.calls(r"/oauth/access_token$")) == exchanges


def test_a_forged_state_is_refused(service: ConnectionService, platform: SandboxPlatform) -> None:
    # Given a real callback whose state was tampered with
    callback = decide(platform, service.start(ORG, USER))
    nonce, expiry, _ = callback["state"].split(".")

    # When / Then
    with pytest.raises(Forbidden):
        complete(service, {**callback, "state": f"{nonce}.{expiry}.forged-signature"})


def test_a_forged_state_carrying_a_real_nonce_leaves_the_genuine_state_usable(
    service: ConnectionService, platform: SandboxPlatform, connections: MemoryConnections
) -> None:
    # Given a user's pending callback, and a forged state that carries its nonce
    callback = decide(platform, service.start(ORG, USER))
    nonce, expiry, _ = callback["state"].split(".")

    # When the forged state arrives first
    with pytest.raises(Forbidden):
        complete(service, {**callback, "state": f"{nonce}.{expiry}.forged-signature"})

    # Then the genuine callback still connects
    assert complete(service, callback).status == "active"
    assert connections.get(ORG) is not None


def test_a_state_started_by_another_user_is_refused_and_connects_nothing(
    service: ConnectionService,
    platform: SandboxPlatform,
    connections: MemoryConnections,
    states: MemoryStates,
) -> None:
    # Given an attacker in organization B starts connecting and sends the link to a victim in org A
    attacker_link = service.start("org-b", "attacker")

    # When the victim approves, and the victim's browser brings back the code with the attacker's
    # state while signed in as the victim
    callback = decide(platform, attacker_link)
    with pytest.raises(Forbidden) as raised:
        complete(service, callback, org_id=ORG, user_id="victim")

    # Then it is refused, clearly, before any exchange with the platform, and nothing is connected
    assert raised.value.message == "This connection request was not started by you in this organization."
    assert raised.value.remedy is not None
    assert "sign in as yourself" in raised.value.remedy
    assert platform.calls(r"/oauth/access_token$") == []
    assert connections.items == {}
    # And the state stays for the user it was issued to
    assert len(states.items) == 1


def test_a_state_is_refused_for_the_same_user_in_another_organization(
    service: ConnectionService, platform: SandboxPlatform, connections: MemoryConnections
) -> None:
    # Given a user who belongs to two organizations starts connecting in organization B
    callback = decide(platform, service.start("org-b", USER))

    # When the callback is posted while signed in to organization A
    with pytest.raises(Forbidden):
        complete(service, callback, org_id=ORG, user_id=USER)

    # Then neither organization is connected
    assert connections.items == {}


def test_a_declined_dialog_says_who_may_connect_and_stores_nothing(
    service: ConnectionService, platform: SandboxPlatform, connections: MemoryConnections
) -> None:
    # Given the user presses Cancel on the platform's dialog
    callback = decide(platform, service.start(ORG, USER), approve=False)

    # When / Then
    with pytest.raises(DevelopmentModePermissions) as raised:
        complete(service, callback)
    assert raised.value.message == "The connection was not approved on the advertising platform."
    assert raised.value.remedy is not None
    assert "Testers and Admins" in raised.value.remedy
    assert connections.items == {}


def test_a_connection_without_every_permission_is_refused(
    service: ConnectionService, platform: SandboxPlatform, connections: MemoryConnections
) -> None:
    # Given the user grants reading only
    callback = decide(platform, service.start(ORG, USER), scope="ads_read")

    # When / Then
    with pytest.raises(Forbidden, match=r"missing permissions: .*ads_management"):
        complete(service, callback)
    assert connections.items == {}


def test_a_redirect_outside_the_apps_domains_is_refused_before_the_user_leaves(
    service: ConnectionService, platform: SandboxPlatform, states: MemoryStates
) -> None:
    # Given an application that accepts redirects to another domain only
    platform.admin("POST", "/scenario", {"name": "app_domain_missing"})

    # When / Then
    with pytest.raises(AppDomainNotAllowed) as raised:
        service.start(ORG, USER)
    assert raised.value.remedy is not None
    assert "dashboard.shop.example" in raised.value.remedy
    assert states.items == {}


# --- using the connection --------------------------------------------------------------------------


def test_an_organization_that_never_connected_is_told_to_connect(service: ConnectionService) -> None:
    with pytest.raises(NotFound) as raised:
        service.client_for(ORG)
    assert raised.value.remedy == "Connect your ad account from the dashboard."
    assert service.status(ORG).status == "not_connected"


def test_a_recently_checked_token_is_handed_out_without_asking_the_platform_again(
    service: ConnectionService, platform: SandboxPlatform
) -> None:
    # Given a connection made a moment ago (its token was checked then)
    connected(service, platform)
    checks = debug_token_calls(platform)

    # When
    connection, graph = service.client_for(ORG)

    # Then the token is used as is, and it works
    assert debug_token_calls(platform) == checks
    assert [account.id for account in list_ad_accounts(graph)] == [connection.ad_account_id]


def test_a_token_is_checked_again_once_its_last_check_is_older_than_ten_minutes(
    service: ConnectionService, platform: SandboxPlatform, connections: MemoryConnections
) -> None:
    # Given a connection checked eleven minutes ago
    first = connected(service, platform)
    checks = debug_token_calls(platform)
    platform.admin("POST", "/clock", {"seconds": 11 * 60})

    # When
    service.client_for(ORG)

    # Then the platform was asked once, and the new check is recorded
    assert debug_token_calls(platform) == checks + 1
    stored = connections.get(ORG)
    assert stored is not None
    assert first.last_validated_at is not None
    assert stored.last_validated_at is not None
    assert stored.last_validated_at - first.last_validated_at >= timedelta(minutes=11)


def test_a_token_close_to_expiry_is_reported_as_expiring(
    service: ConnectionService, platform: SandboxPlatform, connections: MemoryConnections
) -> None:
    # Given a connection whose token expires in less than a week
    connected(service, platform)
    platform.admin("POST", "/clock", {"seconds": 55 * DAY})

    # When it is used
    service.client_for(ORG)

    # Then it still works, and the status warns that it expires soon
    status = service.status(ORG)
    assert (status.connected, status.token_health) == (True, "expiring")


def test_an_expired_token_asks_for_a_reconnection_and_records_why(
    service: ConnectionService, platform: SandboxPlatform, connections: MemoryConnections
) -> None:
    # Given a connection whose token has expired on the platform
    connected(service, platform)
    platform.admin("POST", "/clock", {"seconds": 61 * DAY})

    # When / Then
    with pytest.raises(ReconnectRequired) as raised:
        service.client_for(ORG)
    assert raised.value.remedy == "Reconnect the ad account."
    status = service.status(ORG)
    assert (status.token_health, status.validation_error is not None) == ("invalid", True)


def test_the_status_tells_the_ad_accounts_currency_for_budgets(
    service: ConnectionService, platform: SandboxPlatform
) -> None:
    # Given an ad account billed in US dollars
    platform.admin("PATCH", f"/ad_accounts/{AD_ACCOUNT_ID}", {"currency": "USD"})

    # When it is connected
    connected(service, platform)

    # Then the status says the currency the wizard asks the budget in
    assert service.status(ORG).currency == "USD"


def test_a_token_the_platform_rejects_during_a_call_shows_invalid_at_once(
    service: ConnectionService, platform: SandboxPlatform
) -> None:
    # Given a connection checked a moment ago, whose session the platform invalidates during the next
    # call (190/460: the password was changed)
    connected(service, platform)
    _, graph = service.client_for(ORG)
    platform.fault(kind="revoke_token", path="/me/adaccounts", subcode=460)

    # When
    with pytest.raises(ReconnectRequired):
        list_ad_accounts(graph)

    # Then the status says so now, not at the next scheduled validation
    status = service.status(ORG)
    assert status.token_health == "invalid"
    assert status.validation_error is not None
    assert "190/460" in status.validation_error
    # And the next use asks for a reconnection
    with pytest.raises(ReconnectRequired):
        service.client_for(ORG)


def test_a_refused_request_that_is_not_about_the_token_leaves_it_valid(
    service: ConnectionService, platform: SandboxPlatform
) -> None:
    # Given a call the platform refuses for another reason (a missing permission, code 200)
    connected(service, platform)
    _, graph = service.client_for(ORG)
    platform.fault(kind="error", path="/me/adaccounts", code=200, message="Permissions error")

    # When
    with pytest.raises(DevelopmentModePermissions):
        list_ad_accounts(graph)

    # Then
    assert service.status(ORG).token_health == "valid"


def test_a_rejection_of_an_old_token_does_not_mark_the_new_connection(
    service: ConnectionService, platform: SandboxPlatform
) -> None:
    # Given a client holding the token of a connection that was made again since
    connected(service, platform)
    _, old_graph = service.client_for(ORG)
    platform.admin("POST", "/clock", {"seconds": 5})
    connected(service, platform)
    platform.fault(kind="revoke_token", path="/me/adaccounts", subcode=460)

    # When the old token is refused
    with pytest.raises(ReconnectRequired):
        list_ad_accounts(old_graph)

    # Then the new connection keeps its health
    assert service.status(ORG).token_health == "valid"


def test_the_latest_usage_the_platform_reported_is_kept_on_the_connection(
    service: ConnectionService, platform: SandboxPlatform
) -> None:
    # Given a call made with the connection
    connected(service, platform)
    _, graph = service.client_for(ORG)
    list_ad_accounts(graph)

    # When
    service.record_usage(ORG, graph)

    # Then
    status = service.status(ORG)
    assert graph.last_usage is not None
    assert status.usage == graph.last_usage.model_dump(mode="json")
    assert status.usage_captured_at is not None


# --- disconnecting ---------------------------------------------------------------------------------


def test_disconnecting_destroys_the_token_and_stops_its_use(
    service: ConnectionService, platform: SandboxPlatform, connections: MemoryConnections
) -> None:
    # Given a connected organization
    connected(service, platform)

    # When
    service.disconnect(ORG)

    # Then no token is kept, the status says so, and the connection can no longer be used
    stored = connections.get(ORG)
    assert stored is not None
    assert (stored.status, stored.token, stored.disconnected_at is not None) == ("inactive", None, True)
    status = service.status(ORG)
    assert (status.connected, status.status) == (False, "inactive")
    with pytest.raises(NotFound):
        service.client_for(ORG)


def test_a_disconnected_status_tells_of_no_token_health_or_expiry(
    service: ConnectionService, platform: SandboxPlatform
) -> None:
    # Given a connected organization that disconnects (walking make dev, the Ad account page then read
    # "Disconnected" above "Access expires Jan 28, 2027", and the status said tokenHealth "valid", of a
    # token destroyed)
    connected(service, platform)
    service.disconnect(ORG)
    # When the status is read
    status = service.status(ORG)
    # Then it names no expiry and no health for the destroyed token, and says when it was disconnected
    assert (status.token_expires_at, status.token_health) == (None, "unknown")
    assert status.disconnected_at is not None
