"""The site's key and domains (shared/events/sites.py) on moto's DynamoDB (shared/repositories/events.py):
which pages may send, the key's rotation and revocation, and the rate a site may send at."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import boto3
import pytest

from shared.errors import PreconditionFailed, ValidationFailed
from shared.events.sites import EventSites, declared_domain, origin_allowed, site_view
from shared.repositories.events import DynamoEventSiteStore
from tests.unit.moto_aws import REGION, offline_aws, table

NOW = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)


class Clock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def store(monkeypatch: pytest.MonkeyPatch) -> Iterator[DynamoEventSiteStore]:
    with offline_aws(monkeypatch):
        yield DynamoEventSiteStore(table(), boto3.client("dynamodb", region_name=REGION))


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def sites(store: DynamoEventSiteStore, clock: Clock) -> EventSites:
    return EventSites(store=store, clock=clock)


def admitted(store: DynamoEventSiteStore, key: str, at: datetime, events: int = 1) -> str | None:
    """Why a request of ``events`` under ``key`` at ``at`` is refused (None: admitted), at 5 events a
    10-second window."""
    return store.admit(key, events, at.timestamp(), limit=5, window_seconds=10).refused


@pytest.mark.parametrize(
    ("origin", "allowed"),
    [
        ("https://shop.example.com", True),
        ("https://www.shop.example.com", True),
        ("http://shop.example.com", False),  # https only, but on the machine itself
        ("https://shop.example.com.evil.test", False),
        ("https://evilshop.example.com", False),
        ("https://example.com", False),
        ("http://localhost:8080", True),
        ("http://localhost:9090", False),
        (None, False),
        ("null", False),
    ],
)
def test_a_page_may_send_from_a_declared_domain_or_its_subdomains_only(
    origin: str | None, allowed: bool
) -> None:
    assert origin_allowed(origin, ["shop.example.com", "localhost:8080"]) is allowed


def test_a_domain_is_stored_as_the_host_the_merchant_meant() -> None:
    assert declared_domain(" https://Shop.Example.com/products ") == "shop.example.com"
    assert declared_domain("localhost:8080") == "localhost:8080"
    for bad in ("", "shop example.com", "https://", "*.example.com"):
        with pytest.raises(ValidationFailed):
            declared_domain(bad)


def test_a_key_needs_a_declared_domain_first(sites: EventSites) -> None:
    with pytest.raises(PreconditionFailed):
        sites.issue_key("org-1")


def test_a_key_admits_its_organizations_pages_with_their_domains_and_test_code(
    sites: EventSites, store: DynamoEventSiteStore
) -> None:
    # Given a site with a domain, a test code and a key
    sites.save_settings("org-1", ["shop.example.com"], "TEST1")
    key = str(sites.issue_key("org-1").key)
    # When a request comes under the key
    admission = store.admit(key, 1, NOW.timestamp(), limit=5, window_seconds=10)
    # Then it carries the organization, its domains and test code
    assert (admission.refused, admission.org_id, admission.domains, admission.test_event_code) == (
        None,
        "org-1",
        ["shop.example.com"],
        "TEST1",
    )
    # And settings saved later reach the key at once
    sites.save_settings("org-1", ["shop.example.com", "shop.example.org"], None)
    later = store.admit(key, 1, NOW.timestamp(), limit=5, window_seconds=10)
    assert (later.domains, later.test_event_code) == (["shop.example.com", "shop.example.org"], None)


def test_a_site_sends_at_most_its_limit_a_window_and_again_in_the_next(
    sites: EventSites, store: DynamoEventSiteStore
) -> None:
    sites.save_settings("org-1", ["shop.example.com"], None)
    key = str(sites.issue_key("org-1").key)
    start = datetime(2026, 11, 25, 12, 0, 0, tzinfo=UTC)
    # When the site sends 5 events in a window, then one more
    verdicts = [admitted(store, key, start + timedelta(seconds=second)) for second in range(5)]
    over = store.admit(key, 1, (start + timedelta(seconds=6)).timestamp(), limit=5, window_seconds=10)
    # Then the five pass and the sixth waits for the next window, where the site may send again
    assert verdicts == [None] * 5
    assert (over.refused, over.retry_after_seconds) == ("throttled", 4)
    assert admitted(store, key, start + timedelta(seconds=10)) is None
    # And a request of more events than the window holds is refused whole
    assert admitted(store, key, start + timedelta(seconds=20), events=6) == "throttled"


def test_a_rotated_key_works_for_the_grace_and_a_revoked_one_at_once_not(
    sites: EventSites, store: DynamoEventSiteStore, clock: Clock
) -> None:
    sites.save_settings("org-1", ["shop.example.com"], None)
    old = str(sites.issue_key("org-1").key)
    # When the key is rotated
    rotated = sites.issue_key("org-1")
    new = str(rotated.key)
    # Then the old one works until the grace ends, the new one after it too
    assert rotated.previous_key_expires_at == NOW + timedelta(hours=24)
    assert admitted(store, old, NOW + timedelta(hours=23)) is None
    assert admitted(store, old, NOW + timedelta(hours=24, seconds=1)) == "revoked"
    assert admitted(store, new, NOW + timedelta(hours=25)) is None
    # When it is revoked
    clock.now = NOW + timedelta(hours=26)
    sites.revoke_key("org-1")
    # Then it is refused at once, and an unknown key is unknown
    assert admitted(store, new, NOW + timedelta(hours=26)) == "revoked"
    assert admitted(store, "sk_never-issued", NOW) == "unknown"
    assert store.key_domains(new, (NOW + timedelta(hours=26)).timestamp()) == []


def test_the_events_page_shows_the_snippet_with_the_key_and_the_endpoint(sites: EventSites) -> None:
    sites.save_settings("org-1", ["shop.example.com"], None)
    view = site_view(sites.issue_key("org-1"), "https://abc.execute-api.eu-west-1.amazonaws.com/site-events")
    assert view.snippet is not None
    assert (
        f'"https://abc.execute-api.eu-west-1.amazonaws.com/site-events?key={view.site_key}"' in view.snippet
    )
    assert "eventID: event.eventId" in view.snippet
    assert site_view(sites.revoke_key("org-1"), "https://x/site-events").snippet is None
