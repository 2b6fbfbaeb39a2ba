"""The merchant's site for the site events endpoint (issue 21, items 3 and 6): the domains whose pages
may send events, the site key, the test event code.

A site key can only send events: the endpoint that takes it answers with counts, never with anything
stored. It is public by design (it is written into every page of the shop, as a pixel id is), so it is
shown on the Events page whenever asked, not once. What protects the endpoint is what a key cannot
change: the pages must come from a declared domain (the browser's ``Origin``), a site sends at most
so many events a window, and a key can be rotated (the old one keeps working for a day, while the new
snippet reaches every page) or revoked (at once: 401).
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Annotated, Protocol
from urllib.parse import urlsplit

from pydantic import Field, StringConstraints, WithJsonSchema

from shared.errors import PreconditionFailed, ValidationFailed
from shared.events.snippet import snippet
from shared.records.events import EventSite
from shared.wire_models import CamelModel

# How long a rotated-out key keeps working: time for the new snippet to reach every cached page.
ROTATION_GRACE = timedelta(hours=24)
MAX_DOMAINS = 20
# Events Manager's test codes look like TEST12345; the platform does not say what else it takes.
TEST_EVENT_CODE = re.compile(r"[A-Za-z0-9_-]{1,64}")
_LABEL = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
DOMAIN = re.compile(rf"(?:{_LABEL}\.)*{_LABEL}(?::[0-9]{{1,5}})?")
# Hosts a browser treats as the machine itself: plain http is allowed for them (trying the snippet on
# a shop running locally), https everywhere else.
_LOOPBACK = ("localhost", "127.0.0.1", "::1")


class SiteStore(Protocol):
    def get_site(self, org_id: str) -> EventSite | None: ...
    def save_site(
        self,
        site: EventSite,
        *,
        new_key: str | None = None,
        expire_key: tuple[str, datetime] | None = None,
        revoke_keys: Sequence[str] = (),
    ) -> None: ...


def declared_domain(text: str) -> str:
    """A domain as the merchant typed it (``shop.example.com``, ``https://shop.example.com/``,
    ``localhost:8080``), as stored: lower case, no scheme, path or trailing dot. Raises
    ``ValidationFailed`` for anything that is not a host name (with an optional port)."""
    value = text.strip().lower()
    for scheme in ("https://", "http://"):
        value = value.removeprefix(scheme)
    value = value.split("/", 1)[0].rstrip(".")
    if not value or len(value) > 253 or not DOMAIN.fullmatch(value):
        raise ValidationFailed(
            f"'{text.strip()[:80]}' is not a domain.",
            field="domains",
            remedy="Give the shop's domain as the browser's address bar shows it, e.g. shop.example.com.",
        )
    return value


def origin_allowed(origin: str | None, domains: Sequence[str]) -> bool:
    """Whether a page of ``origin`` (``https://www.shop.example.com``) is on one of ``domains``: the
    same host or a subdomain of it, on the declared port if one is given; https, or http on the
    machine itself."""
    if not origin:
        return False
    try:
        parts = urlsplit(origin)
        port = parts.port
    except ValueError:
        return False
    host = (parts.hostname or "").lower()
    loopback = host in _LOOPBACK or host.endswith(".localhost")
    if parts.scheme != "https" and not (parts.scheme == "http" and loopback):
        return False
    for domain in domains:
        name, _, declared_port = domain.partition(":")
        if (host == name or host.endswith("." + name)) and (not declared_port or port == int(declared_port)):
            return True
    return False


def page_origin(url: str) -> str | None:
    """The origin of a page's address (``scheme://host[:port]``), or None if it is not one."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return None
    return f"{parts.scheme}://{parts.netloc}"


def new_site_key() -> str:
    """A new site key: ``sk_`` and 32 random URL-safe characters."""
    return "sk_" + secrets.token_urlsafe(24)


@dataclass
class EventSites:
    """The Events page's site settings: domains, test event code, the key's life."""

    store: SiteStore
    clock: Callable[[], datetime]
    grace: timedelta = ROTATION_GRACE

    def site(self, org_id: str) -> EventSite:
        """The organization's site (empty until the merchant saves something)."""
        return self.store.get_site(org_id) or EventSite(org_id=org_id, updated_at=self.clock())

    def save_settings(self, org_id: str, domains: Sequence[str], test_event_code: str | None) -> EventSite:
        """Store the domains the shop's pages are served from (at most ``MAX_DOMAINS``, each as
        :func:`declared_domain` reads it) and the test event code (None or "": none). The keys in force
        follow at once."""
        cleaned = list(dict.fromkeys(declared_domain(domain) for domain in domains))
        if len(cleaned) > MAX_DOMAINS:
            raise ValidationFailed(
                f"{len(cleaned)} domains are more than the {MAX_DOMAINS} a site may declare.",
                field="domains",
                remedy="Declare the shop's main domains: each one covers its subdomains.",
            )
        code = (test_event_code or "").strip() or None
        if code is not None and not TEST_EVENT_CODE.fullmatch(code):
            raise ValidationFailed(
                "The test event code has characters Events Manager's codes do not have.",
                field="testEventCode",
                remedy="Copy the code from Events Manager's Test events tab (e.g. TEST12345).",
            )
        site = self.site(org_id).model_copy(
            update={"domains": cleaned, "test_event_code": code, "updated_at": self.clock()}
        )
        self.store.save_site(site)
        return site

    def issue_key(self, org_id: str) -> EventSite:
        """Create the site key, or rotate it: a new key, with the one it replaces working for
        ``grace`` more (a key rotated out before is revoked now). Raises ``PreconditionFailed`` while
        no domain is declared (every page would be refused)."""
        site = self.site(org_id)
        if not site.domains:
            raise PreconditionFailed(
                "Declare the shop's domain before creating a site key: events from pages of other domains "
                "are refused.",
                field="domains",
                remedy="Add the shop's domain (e.g. shop.example.com) on the Events page and save it.",
            )
        now = self.clock()
        key = new_site_key()
        revoke = [site.previous_key] if site.previous_key else []
        expire = (site.key, now + self.grace) if site.key else None
        updated = site.model_copy(
            update={
                "key": key,
                "key_created_at": now,
                "previous_key": site.key,
                "previous_key_expires_at": expire[1] if expire else None,
                "updated_at": now,
            }
        )
        self.store.save_site(updated, new_key=key, expire_key=expire, revoke_keys=revoke)
        return updated

    def revoke_key(self, org_id: str) -> EventSite:
        """Revoke the site key (and one rotated out): from now on its requests get 401."""
        site = self.site(org_id)
        keys = [key for key in (site.key, site.previous_key) if key]
        updated = site.model_copy(
            update={
                "key": None,
                "key_created_at": None,
                "previous_key": None,
                "previous_key_expires_at": None,
                "updated_at": self.clock(),
            }
        )
        self.store.save_site(updated, revoke_keys=keys)
        return updated


# What declared_domain and save_settings take, as openapi.json says it: a host name (optional scheme and
# port; up to three labels keeps it within 253 characters), and a test code of letters, digits, _ and -
# (empty: none). The model keeps its own looser checks; the service judges the rest.
_DOMAIN_LABEL = "[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
DOMAIN_SCHEMA = WithJsonSchema(
    {
        "type": "string",
        "maxLength": 253,
        "pattern": f"^(?:https://)?(?:{_DOMAIN_LABEL}\\.){{0,2}}{_DOMAIN_LABEL}(?::[0-9]{{1,5}})?$",
    }
)
TEST_EVENT_CODE_SCHEMA = WithJsonSchema({"type": "string", "pattern": "^[A-Za-z0-9_-]{0,64}$"})


class SiteSettingsRequest(CamelModel):
    """The shop's site as the merchant declares it on the Events page."""

    domains: list[Annotated[str, StringConstraints(max_length=300), DOMAIN_SCHEMA]] = Field(
        max_length=MAX_DOMAINS,
        description="The domains the shop's pages are served from (each covers its subdomains), e.g. "
        "shop.example.com; https is required except on localhost.",
    )
    test_event_code: Annotated[str, TEST_EVENT_CODE_SCHEMA] | None = Field(
        default=None,
        max_length=64,
        description="Events Manager's test event code (Test events tab): the site's events carry it while "
        "it is set. Empty: none.",
    )


class SiteSettingsView(CamelModel):
    """The Events page's site section: domains, test event code, the site key in force (public by
    design, it is in every page; it can only send events) and the snippet to paste into the pages."""

    domains: list[str]
    test_event_code: str | None = None
    site_key: str | None = Field(default=None, description="None until created, or after revoking.")
    site_key_created_at: datetime | None = None
    previous_key_expires_at: datetime | None = Field(
        default=None,
        description="A rotated-out key keeps working until then (the new snippet reaches every page).",
    )
    endpoint: str = Field(description="The public site events endpoint the snippet posts to.")
    snippet: str | None = Field(
        default=None, description="The script for the shop's pages (with a site key)."
    )


def site_view(site: EventSite, endpoint: str) -> SiteSettingsView:
    """What the Events page shows of ``site``, the snippet posting to ``endpoint``."""
    return SiteSettingsView(
        domains=site.domains,
        test_event_code=site.test_event_code,
        site_key=site.key,
        site_key_created_at=site.key_created_at,
        previous_key_expires_at=site.previous_key_expires_at if site.previous_key else None,
        endpoint=endpoint,
        snippet=snippet(endpoint, site.key) if site.key else None,
    )
