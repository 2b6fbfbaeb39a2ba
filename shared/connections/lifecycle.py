"""Connect, complete the OAuth callback, disconnect, report status, and hand out a validated token.

Connecting never stores a plaintext token: the long-lived token is encrypted with a KMS data key
(AES-GCM, context = organization + connection) before it reaches DynamoDB.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol
from urllib.parse import urlparse

from pydantic import Field

from shared.clock import Clock
from shared.connections.oauth_state import StateOwner, StateStore, consume_state, issue_state
from shared.errors import Forbidden, NotFound, ValidationFailed
from shared.observability import logger
from shared.platform.accounts import list_ad_accounts, select_business_account
from shared.platform.client import GraphClient
from shared.platform.errors import (
    APP_DOMAIN_NOT_ALLOWED,
    CONNECTION_DECLINED,
    CONNECTION_NOT_ACCEPTED,
    TOKEN_INVALID,
    GraphErrorDetail,
    build_error,
)
from shared.platform.oauth import (
    DEFAULT_SCOPES,
    TokenInfo,
    app_domains,
    authorization_url,
    debug_token,
    exchange_code,
    exchange_long_lived,
)
from shared.records.connections import Connection, EncryptedSecret, TokenHealth
from shared.wire_models import CamelModel

NOT_CONNECTED = "No advertising account is connected."
CONNECT_REMEDY = "Connect your ad account from the dashboard."


class ConnectionStore(Protocol):
    def put(self, connection: Connection) -> None: ...
    def get(self, org_id: str) -> Connection | None: ...
    def record_usage(self, org_id: str, usage: dict[str, Any], now: datetime) -> None: ...
    def record_token_rejected(
        self, org_id: str, connected_at: datetime | None, error: str, now: datetime
    ) -> None:
        """Mark the token invalid, unless the connection was made again meanwhile."""
        ...


class TokenCipher(Protocol):
    """Encrypts a token bound to a context; decrypting under another context fails."""

    def encrypt(self, plaintext: str, context: dict[str, str]) -> EncryptedSecret: ...
    def decrypt(self, secret: EncryptedSecret, context: dict[str, str]) -> str: ...


@dataclass(frozen=True)
class ConnectionPolicy:
    """Settings of the lifecycle (from ``Settings``)."""

    dialog_url: str
    api_version: str
    redirect_uri: str
    state_key: str
    state_ttl: timedelta = timedelta(minutes=10)
    # Re-check a token with debug_token before use when the last check is older than this.
    revalidate_after: timedelta = timedelta(minutes=10)
    # A token expiring sooner than this is reported as "expiring" so the user reconnects in time.
    expiry_warning: timedelta = timedelta(days=7)


class ConnectStart(CamelModel):
    authorization_url: str
    expires_at: datetime


class StatusView(CamelModel):
    """``GET /platform-ads/status``."""

    connected: bool
    status: str
    ad_account_id: str | None = None
    ad_account_name: str | None = None
    business_name: str | None = None
    currency: str | None = Field(
        default=None,
        description="The ad account's currency: budgets are in it (unknown for older connections).",
    )
    connected_at: datetime | None = None
    disconnected_at: datetime | None = Field(
        default=None, description="When it was disconnected (the token was destroyed then)."
    )
    last_validated_at: datetime | None = None
    token_expires_at: datetime | None = Field(default=None, description="None once the token is destroyed.")
    token_health: str = Field(
        default="unknown", description="valid, expiring, invalid; unknown without a token."
    )
    validation_error: str | None = None
    usage: dict[str, Any] | None = None
    usage_captured_at: datetime | None = None


@dataclass
class ConnectionService:
    """The connection lifecycle for one request; collaborators are passed in."""

    connections: ConnectionStore
    states: StateStore
    cipher: TokenCipher
    graph: GraphClient
    policy: ConnectionPolicy
    clock: Clock

    def start(self, org_id: str, user_id: str) -> ConnectStart:
        """A signed, single-use, expiring authorization URL for the user to open.

        Checks first that the application accepts our redirect URI: otherwise the platform's dialog
        would strand the user on "Can't load URL" with nothing the user can do about it.
        """
        self._check_redirect_domain()
        now = self.clock()
        state = issue_state(
            self.states, self.policy.state_key, StateOwner(org_id, user_id), now, self.policy.state_ttl
        )
        url = authorization_url(
            dialog_url=self.policy.dialog_url,
            version=self.policy.api_version,
            app_id=self.graph.app_id,
            redirect_uri=self.policy.redirect_uri,
            state=state,
            scopes=DEFAULT_SCOPES,
        )
        return ConnectStart(authorization_url=url, expires_at=now + self.policy.state_ttl)

    def complete(
        self,
        *,
        org_id: str,
        user_id: str,
        state: str,
        code: str | None,
        error: str | None = None,
        error_reason: str | None = None,
    ) -> Connection:
        """Finish the OAuth callback for the signed-in user ``user_id`` of ``org_id``: check the
        state was issued to them, exchange the code, pick the business account, and store the
        encrypted long-lived token. Returns the active connection.

        Binding the state to the caller is what stops a connection landing in someone else's
        organization: a link started by another user, approved by this one, is refused.
        """
        now = self.clock()
        owner = StateOwner(org_id, user_id)
        consume_state(self.states, self.policy.state_key, state, owner, now)
        if error or not code:
            raise _declined(error, error_reason)
        short = exchange_code(self.graph, code, self.policy.redirect_uri)
        grant = exchange_long_lived(self.graph, short.access_token)
        info = debug_token(self.graph, grant.access_token)
        if not info.is_valid:
            raise build_error(CONNECTION_NOT_ACCEPTED)
        missing = info.missing_scopes()
        if missing:
            raise Forbidden(
                f"The connection is missing permissions: {', '.join(missing)}.",
                remedy="Connect again and grant every requested permission.",
            )
        user_graph = self.graph.with_access_token(grant.access_token)
        account = select_business_account(list_ad_accounts(user_graph))
        connection = Connection(
            org_id=owner.org_id,
            status="active",
            ad_account_id=account.id,
            ad_account_name=account.name,
            business_id=account.business_id,
            business_name=account.business_name,
            currency=account.currency,
            platform_user_id=info.user_id,
            connected_by=owner.user_id,
            connected_at=now,
            token_expires_at=info.expires_at or (now + timedelta(seconds=grant.expires_in or 0)),
            scopes=list(info.scopes),
            last_validated_at=now,
            token_health=self._health(info, now),
        )
        connection.token = self.cipher.encrypt(grant.access_token, connection.token_context())
        if user_graph.last_usage is not None:
            connection.usage = user_graph.last_usage.model_dump(mode="json")
            connection.usage_captured_at = now
        self.connections.put(connection)
        logger.info("platform connected", extra={"org_id": owner.org_id, "ad_account_id": account.id})
        return connection

    def disconnect(self, org_id: str) -> Connection:
        """Make the connection inactive and destroy the stored token; platform audiences remain."""
        connection = self._require(org_id)
        connection.status = "inactive"
        connection.token = None
        connection.disconnected_at = self.clock()
        self.connections.put(connection)
        logger.info("platform disconnected", extra={"org_id": org_id})
        return connection

    def status(self, org_id: str) -> StatusView:
        connection = self.connections.get(org_id)
        if connection is None:
            return StatusView(connected=False, status="not_connected")
        return StatusView(
            connected=connection.status == "active",
            status=connection.status,
            ad_account_id=connection.ad_account_id,
            ad_account_name=connection.ad_account_name,
            business_name=connection.business_name,
            currency=connection.currency,
            connected_at=connection.connected_at,
            # A disconnection destroys the token: no expiry or health is left to report of it.
            disconnected_at=connection.disconnected_at if connection.status != "active" else None,
            last_validated_at=connection.last_validated_at,
            token_expires_at=connection.token_expires_at if connection.token is not None else None,
            token_health=connection.token_health if connection.token is not None else "unknown",
            validation_error=connection.validation_error,
            usage=connection.usage,
            usage_captured_at=connection.usage_captured_at,
        )

    def client_for(self, org_id: str) -> tuple[Connection, GraphClient]:
        """The active connection and a Graph client with its token, validated server-side first
        (``debug_token``, re-checked when the last check is older than ``revalidate_after``)."""
        connection = self._require(org_id)
        if connection.status != "active" or connection.token is None:
            raise NotFound(NOT_CONNECTED, remedy=CONNECT_REMEDY)
        token = self.cipher.decrypt(connection.token, connection.token_context())
        now = self.clock()
        stale = (
            connection.last_validated_at is None
            or now - connection.last_validated_at > self.policy.revalidate_after
        )
        if stale or connection.token_health == "invalid":
            connection = self.validate(connection, token)
        if connection.token_health == "invalid":
            raise build_error(TOKEN_INVALID)
        return connection, self._token_client(connection, token)

    def validate(self, connection: Connection, token: str | None = None) -> Connection:
        """Check the token with ``debug_token`` and record the result on the connection."""
        if connection.token is None:
            return connection
        token = token or self.cipher.decrypt(connection.token, connection.token_context())
        self._check(connection, token)
        return connection

    def inspect(self, org_id: str) -> tuple[Connection, TokenInfo, GraphClient]:
        """The active connection, what ``debug_token`` says of its token now (recorded on the
        connection, as ``validate`` does) and a Graph client with the token, whatever its health: the
        readiness checklist reports each problem instead of stopping at the first."""
        connection = self._require(org_id)
        if connection.status != "active" or connection.token is None:
            raise NotFound(NOT_CONNECTED, remedy=CONNECT_REMEDY)
        token = self.cipher.decrypt(connection.token, connection.token_context())
        info = self._check(connection, token)
        return connection, info, self._token_client(connection, token)

    def _token_client(self, connection: Connection, token: str) -> GraphClient:
        """A Graph client with the connection's token that records at once, on the connection, any
        refusal of the token by the platform (an upload, a publish, a readiness check...): the status
        shows it now, not at the next scheduled validation."""
        org_id, connected_at = connection.org_id, connection.connected_at

        def rejected(detail: GraphErrorDetail) -> None:
            error = f"The platform rejected the token during a call (code {detail.code}/{detail.subcode})."
            self.connections.record_token_rejected(org_id, connected_at, error, self.clock())
            logger.warning(
                "platform token rejected",
                extra={"org_id": org_id, "platform_code": detail.code, "platform_subcode": detail.subcode},
            )

        return self.graph.with_access_token(token, on_token_rejected=rejected)

    def _check(self, connection: Connection, token: str) -> TokenInfo:
        now = self.clock()
        info = debug_token(self.graph, token)
        connection.last_validated_at = now
        connection.token_health = self._health(info, now)
        connection.validation_error = _validation_error(info)
        if info.expires_at is not None:
            connection.token_expires_at = info.expires_at
        self.connections.put(connection)
        return info

    def record_usage(self, org_id: str, graph: GraphClient) -> None:
        """Keep the latest usage headers the platform sent on ``graph``'s calls."""
        if graph.last_usage is not None:
            self.connections.record_usage(org_id, graph.last_usage.model_dump(mode="json"), self.clock())

    def _check_redirect_domain(self) -> None:
        domains = app_domains(self.graph)
        host = urlparse(self.policy.redirect_uri).hostname or ""
        if domains and not any(host == d or host.endswith(f".{d}") for d in domains):
            rule = APP_DOMAIN_NOT_ALLOWED
            raise rule.error(rule.message, remedy=f"{rule.remedy} The redirect URI's host is {host}.")

    def _require(self, org_id: str) -> Connection:
        connection = self.connections.get(org_id)
        if connection is None:
            raise NotFound(NOT_CONNECTED, remedy=CONNECT_REMEDY)
        return connection

    def _health(self, info: TokenInfo, now: datetime) -> TokenHealth:
        if not info.is_valid or info.missing_scopes():
            return "invalid"
        if info.expires_at is not None and info.expires_at - now < self.policy.expiry_warning:
            return "expiring"
        return "valid"


def _validation_error(info: TokenInfo) -> str | None:
    if not info.is_valid:
        code = f" (code {info.error_code}/{info.error_subcode})" if info.error_code else ""
        return f"The platform reports the token as invalid{code}."
    missing = info.missing_scopes()
    return f"Missing permissions: {', '.join(missing)}." if missing else None


def _declined(error: str | None, reason: str | None) -> Exception:
    """The error for a callback that came back without a code."""
    if reason == "user_denied" or error == "access_denied":
        return build_error(CONNECTION_DECLINED)
    if error in {"redirect_uri_not_allowed", "domain_not_allowed"}:
        return build_error(APP_DOMAIN_NOT_ALLOWED)
    return ValidationFailed(
        "The platform returned no authorization code.", field="code", remedy="Start connecting again."
    )
