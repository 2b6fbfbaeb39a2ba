"""The simulated platform's data: app, users, ad accounts, tokens, audiences and ad objects.

Plain dataclasses; every read and write happens under the sandbox lock (``SandboxState.lock``), so
nothing here synchronises on its own.
"""

from __future__ import annotations

import itertools
from collections import Counter, deque
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class AppMode(StrEnum):
    LIVE = "live"
    DEVELOPMENT = "development"


class AppRole(StrEnum):
    ADMIN = "admin"
    TESTER = "tester"


class AccountRole(StrEnum):
    ADMIN = "ADMIN"
    ADVERTISER = "ADVERTISER"
    ANALYST = "ANALYST"


# What `user_tasks` shows for each role on an ad account (docs/platform-notes.md §1.7).
ACCOUNT_TASKS: dict[AccountRole, list[str]] = {
    AccountRole.ADMIN: ["MANAGE", "ADVERTISE", "ANALYZE", "DRAFT"],
    AccountRole.ADVERTISER: ["ADVERTISE", "ANALYZE", "DRAFT"],
    AccountRole.ANALYST: ["ANALYZE"],
}


class TokenKind(StrEnum):
    USER = "USER"
    APP = "APP"


@dataclass
class App:
    app_id: str
    secret: str
    name: str
    mode: AppMode = AppMode.LIVE
    # "development_access" limits the Marketing API to app admins (error 270, docs/platform-notes.md §7.2).
    ads_access_tier: str = "standard_access"
    roles: dict[str, set[AppRole]] = field(default_factory=dict)
    # Redirect URIs must start with one of these; empty means any (the "app domains" setting).
    allowed_redirect_prefixes: list[str] = field(default_factory=list)


@dataclass
class User:
    user_id: str
    name: str


@dataclass
class Business:
    business_id: str
    name: str


@dataclass
class AdAccount:
    account_id: str
    name: str
    roles: dict[str, AccountRole]
    business: Business | None = None
    currency: str = "GBP"
    timezone_name: str = "Europe/London"
    account_status: int = 1
    tos_accepted: bool = True
    funding_source: str | None = "FUNDING-1"
    min_daily_budget: int = 100
    default_dsa_beneficiary: str | None = None
    default_dsa_payor: str | None = None

    @property
    def graph_id(self) -> str:
        return f"act_{self.account_id}"


@dataclass
class Pixel:
    pixel_id: str
    name: str
    account_id: str


@dataclass
class PixelActivity:
    """What a pixel received through the Conversions API (docs/platform-notes.md §11).

    ``received`` counts every event of every accepted request (what ``events_received`` answered);
    ``counted`` the events kept after de-duplication, by name, live and test apart. ``seen`` holds the
    first arrival of each ``(event_name, event_id, test_event_code)`` for the 48-hour window, and
    ``events`` the latest events as received, for the admin API (bounded: a million-event sync must
    not hold them all).
    """

    events: deque[dict[str, Any]]
    received: int = 0
    deduplicated: int = 0
    counted: Counter[str] = field(default_factory=Counter)
    test_counted: Counter[str] = field(default_factory=Counter)
    seen: dict[tuple[str, str, str | None], float] = field(default_factory=dict)
    # The last live (not test) event kept: what the pixel's ``last_fired_time`` reports.
    last_fired_time: float | None = None


@dataclass
class Page:
    page_id: str
    name: str
    # Users with a role on the page and the tasks it grants.
    roles: dict[str, list[str]]


@dataclass
class Token:
    value: str
    kind: TokenKind
    app_id: str
    user_id: str | None
    scopes: list[str]
    issued_at: float
    expires_at: float  # 0 means never
    revoked_subcode: int | None = None


@dataclass
class AuthCode:
    value: str
    user_id: str
    redirect_uri: str
    scopes: list[str]
    issued_at: float
    used: bool = False


@dataclass
class UploadSession:
    """One advertiser-chosen ``session_id`` on one audience (docs/platform-notes.md §3.3)."""

    session_id: str
    started_at: float
    # Rows received and invalid per batch_seq, so a retried batch is counted once.
    received: dict[int, int] = field(default_factory=dict)
    invalid: dict[int, int] = field(default_factory=dict)
    finished: bool = False

    @property
    def num_received(self) -> int:
        return sum(self.received.values())

    @property
    def num_invalid(self) -> int:
        return sum(self.invalid.values())


Row = tuple[str, ...]


@dataclass
class ReplaceSession:
    """A running ``usersreplace``: members staged here replace the audience on the last batch."""

    session: UploadSession
    staged: dict[tuple[str, ...], set[Row]] = field(default_factory=dict)
    staged_values: dict[tuple[tuple[str, ...], Row], float] = field(default_factory=dict)


@dataclass
class CustomAudience:
    audience_id: str
    account_id: str
    name: str
    subtype: str
    time_created: int
    description: str = ""
    customer_file_source: str | None = None
    # Members grouped by the schema they were uploaded with; a set, so a retried batch adds nothing.
    members: dict[tuple[str, ...], set[Row]] = field(default_factory=dict)
    sessions: dict[str, UploadSession] = field(default_factory=dict)
    replace: ReplaceSession | None = None
    # The last replace was dropped unfinished (90 minutes passed): operation_status 415 until the next
    # upload that completes (docs/platform-notes.md §3.6).
    replace_failed: bool = False
    ever_uploaded: bool = False
    origin_audience_id: str | None = None
    lookalike_spec: dict[str, Any] | None = None
    deleted: bool = False
    time_updated: int | None = None
    # None keeps members for as long as the platform does (docs/platform-notes.md §2.1).
    retention_days: int | None = None
    is_value_based: bool = False
    # A value-based audience's customer values (LOOKALIKE_VALUE), by (schema, member row); a member
    # uploaded with an empty value has none (docs/platform-notes.md §4.1).
    values: dict[tuple[tuple[str, ...], Row], float] = field(default_factory=dict)

    @property
    def member_count(self) -> int:
        return sum(len(rows) for rows in self.members.values())


@dataclass
class AdObject:
    """A campaign, ad set, ad creative or ad: its kind, owner account and the fields it was given."""

    object_id: str
    kind: str
    account_id: str
    fields: dict[str, Any]


@dataclass
class World:
    """All platform data of one scenario."""

    app: App
    users: dict[str, User]
    accounts: dict[str, AdAccount]
    pixels: dict[str, Pixel]
    pages: dict[str, Page]
    # The user the OAuth dialog is "logged in" as.
    dialog_user_id: str
    tokens: dict[str, Token] = field(default_factory=dict)
    codes: dict[str, AuthCode] = field(default_factory=dict)
    audiences: dict[str, CustomAudience] = field(default_factory=dict)
    ad_objects: dict[str, AdObject] = field(default_factory=dict)
    # Conversions API events by pixel id (created on a pixel's first request).
    pixel_activity: dict[str, PixelActivity] = field(default_factory=dict)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(23_850_000_000_000_001))

    def new_id(self) -> str:
        """A fresh numeric object id (Graph ids are numeric strings)."""
        return str(next(self._ids))

    def accounts_of(self, user_id: str) -> list[AdAccount]:
        return [account for account in self.accounts.values() if user_id in account.roles]

    def pixels_of(self, account_id: str) -> list[Pixel]:
        return [pixel for pixel in self.pixels.values() if pixel.account_id == account_id]

    def live_audiences_of(self, account_id: str) -> list[CustomAudience]:
        return [a for a in self.audiences.values() if a.account_id == account_id and not a.deleted]

    def lookalikes_of(self, audience_id: str) -> list[CustomAudience]:
        return [a for a in self.audiences.values() if a.origin_audience_id == audience_id and not a.deleted]
