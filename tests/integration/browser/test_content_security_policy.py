"""The dashboard runs under its Content-Security-Policy in Chromium: every page is served with it,
the pages do their work without a single violation, script planted in the page (an inline script,
an inline handler) is refused and reported by the browser, and markup a merchant or the platform
puts in a field (a key label, an audience name, an advert's headline and primary text, a name given in
the ads manager, the platform's error message with an activation or an event's rejection) is shown as
text."""

from __future__ import annotations

import re
import uuid
from typing import Any

import httpx
import pytest
from playwright.sync_api import BrowserContext, Page, expect

from local.connected import ConnectedOrg
from local.seed import DemoCredentials
from local.seed import sign_in as jwt_for
from local.stack import LocalStack
from tests.integration.browser.conftest import sign_in
from tests.integration.browser.test_wizard import connected_user
from tests.integration.test_activation_pipeline import users, wait_until
from tests.integration.test_publishing import MarketerToken, create_audience, ids_of, publish
from tests.integration.test_site_events import page_event, post_events, site_key
from tests.integration.test_token_validation import SCHEDULED_EVENT

pytestmark = pytest.mark.integration

SIGNED_IN_PAGES = [
    "connection.html",
    "api-keys.html",
    "audiences.html",
    "events.html",
    "models.html",
    "wizard.html",
    "account.html",
    "payments.html",
]
# Runs before the page's own scripts (Playwright's init scripts are not the page's, so the policy
# does not apply to them): every violation the browser reports is kept for the test to read.
RECORD_VIOLATIONS = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  const {effectiveDirective, blockedURI, sample} = event;
  window.__violations.push({directive: effectiveDirective, blocked: blockedURI, sample});
});
"""
HOSTILE_LABEL = '<img src=x onerror="window.__ran=1">'
HOSTILE_MESSAGE = "<svg onload=\"window.__ran='message'\"></svg>"


@pytest.fixture
def watched(context: BrowserContext, page: Page) -> Page:
    context.add_init_script(RECORD_VIOLATIONS)
    return page


def violations(page: Page) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = page.evaluate("window.__violations")
    return found


@pytest.mark.parametrize("path", ["index.html", "closed.html", "connect-callback.html", *SIGNED_IN_PAGES])
def test_every_page_is_served_with_the_policy(stack: LocalStack, path: str) -> None:
    # When
    response = httpx.get(f"{stack.dashboard_url}/{path}")
    # Then
    assert response.status_code == 200
    policy = response.headers["content-security-policy"]
    assert "script-src 'self';" in policy
    assert "frame-ancestors 'none'" in policy
    assert f"connect-src 'self' {stack.api_url} {stack.moto_url};" in policy


def test_the_pages_do_their_work_without_a_violation(watched: Page, demo: DemoCredentials) -> None:
    # Given: signed in through the sign-in page's own script and the user pool
    sign_in(watched, demo.email, demo.password)
    for path in SIGNED_IN_PAGES:
        # When
        watched.goto(f"/{path}")
        # Then: the page's module ran (it writes who is signed in) and called the API without a refusal
        expect(watched.get_by_text(f"Signed in as {demo.email}")).to_be_visible()
        watched.wait_for_load_state("networkidle")
        assert violations(watched) == [], path


def test_an_injected_inline_script_and_handler_are_blocked_and_reported(
    watched: Page, demo: DemoCredentials
) -> None:
    # Given
    sign_in(watched, demo.email, demo.password)
    watched.goto("/api-keys.html")
    expect(watched.get_by_text(f"Signed in as {demo.email}")).to_be_visible()
    # When: markup as an injection would leave it in the page
    watched.evaluate(
        """() => {
            const script = document.createElement("script");
            script.textContent = "window.__ran = 'script'";
            document.body.append(script);
            const holder = document.createElement("div");
            holder.innerHTML = '<img src="data:," onload="window.__ran = \\'handler\\'">';
            document.body.append(holder);
        }"""
    )
    watched.wait_for_function("window.__violations.length >= 2")
    # Then: neither ran, and the browser reported both
    assert watched.evaluate("window.__ran") is None
    assert sorted(v["directive"] for v in violations(watched)) == ["script-src-attr", "script-src-elem"]
    assert all(v["blocked"] == "inline" for v in violations(watched))


def test_markup_in_a_key_label_is_shown_as_text_and_never_runs(
    watched: Page, stack: LocalStack, demo: DemoCredentials
) -> None:
    # Given: a key whose label is markup
    created = httpx.post(
        f"{stack.api_url}/dashboard/api-keys",
        json={"label": HOSTILE_LABEL},
        headers={"Authorization": f"Bearer {demo.id_token}"},
    )
    assert created.status_code == 201, created.text
    # When
    sign_in(watched, demo.email, demo.password)
    watched.goto("/api-keys.html")
    # Then: the label is text, nothing ran, and nothing needed refusing
    expect(watched.get_by_role("row").filter(has_text=re.compile(re.escape(HOSTILE_LABEL)))).to_have_count(1)
    watched.wait_for_load_state("networkidle")
    assert watched.evaluate("window.__ran") is None
    assert violations(watched) == []


def test_markup_in_an_audience_name_and_a_platform_message_is_shown_as_text_and_never_runs(
    watched: Page, stack: LocalStack, sandbox: httpx.Client
) -> None:
    # Given: an organization whose audience is named with markup, and whose other activation the
    # platform refused with a message holding markup (the platform's words are shown to the marketer)
    email, password = connected_user(watched, stack)
    org = ConnectedOrg(email.split("@")[0], {"Authorization": f"Bearer {jwt_for(stack, email, password)}"})
    with httpx.Client(base_url=stack.api_url, timeout=60) as api:
        named = api.post(
            "/platform-ads/audiences",
            json={"name": f"Buyers {HOSTILE_LABEL}", "users": users(20, "n")},
            headers=org.headers,
        )
        assert named.status_code == 201, named.text
        sandbox.post(
            "/faults",
            json={
                "kind": "error",
                "method": "POST",
                "path": "/customaudiences$",
                "code": 100,
                "message": f"Invalid parameter {HOSTILE_MESSAGE}",
                "http_status": 400,
            },
        ).raise_for_status()
        started = api.post(
            "/platform-ads/activations",
            json={"name": "Refused list", "users": users(20, "r")},
            headers=org.headers,
        )
        assert started.status_code == 202, started.text
        wait_until(api, org, started.json()["audienceId"], "failed", "succeeded")
    # When the Audiences page shows them
    watched.goto("/audiences.html")
    named_row = watched.get_by_role("row").filter(has_text=f"Buyers {HOSTILE_LABEL}")
    refused_row = watched.get_by_role("row").filter(has_text="Refused list")
    # Then both are text: the name as written, the platform's message with its markup; nothing ran and
    # nothing needed refusing
    expect(named_row).to_have_count(1)
    expect(refused_row).to_contain_text(HOSTILE_MESSAGE)
    watched.wait_for_load_state("networkidle")
    assert watched.evaluate("window.__ran") is None
    assert violations(watched) == []


def signed_in_org(watched: Page, stack: LocalStack) -> ConnectedOrg:
    """A new organization's user, signed in and connected in the browser, with its API headers."""
    email, password = connected_user(watched, stack)
    return ConnectedOrg(email.split("@")[0], {"Authorization": f"Bearer {jwt_for(stack, email, password)}"})


def test_markup_in_advert_text_and_a_name_given_in_the_ads_manager_is_shown_as_text_and_never_runs(
    watched: Page, stack: LocalStack, sandbox: httpx.Client
) -> None:
    # Given: an advert published with markup in its headline and primary text, whose campaign the
    # marketer then renamed in the platform's ads manager to markup, which the scheduled check found
    org = signed_in_org(watched, stack)
    with httpx.Client(base_url=stack.api_url, timeout=60) as api:
        audience = create_audience(api, org, objective="retargeting")
        published = publish(api, org, audience, headline=f"Sale {HOSTILE_LABEL}", message=HOSTILE_MESSAGE)
        assert published.status_code == 201, published.text
    campaign_id = ids_of(published.json())["campaign"]
    renamed = httpx.post(
        f"{stack.sandbox.url}/v25.0/{campaign_id}",
        data={"name": f"Edited {HOSTILE_MESSAGE}"},
        auth=MarketerToken(stack.sandbox.url),
    )
    assert renamed.json() == {"success": True}
    assert stack.gateway is not None
    stack.gateway.invoke("ValidateTokensFunction", SCHEDULED_EVENT)
    # When the Audiences page shows the advert
    watched.goto("/audiences.html")
    row = watched.get_by_role("row").filter(has_text=f"Sale {HOSTILE_LABEL}")
    # Then the headline, the primary text and the platform's new name are all text as written;
    # nothing ran and nothing needed refusing
    expect(row).to_have_count(1)
    expect(row).to_contain_text(HOSTILE_MESSAGE)
    expect(row.locator(".platform-changes")).to_contain_text(f"Edited {HOSTILE_MESSAGE}")
    watched.wait_for_load_state("networkidle")
    assert watched.evaluate("window.__ran") is None
    assert violations(watched) == []


def test_markup_in_a_platform_rejection_on_the_events_page_is_shown_as_text_and_never_runs(
    watched: Page, stack: LocalStack, sandbox: httpx.Client
) -> None:
    # Given: a shop page's purchase the platform refused with a message holding markup (its words are
    # shown to the marketer with the rejection)
    org = signed_in_org(watched, stack)
    refusal = {"kind": "error", "method": "POST", "path": "/events$", "code": 100, "subcode": 2804019}
    with httpx.Client(base_url=stack.api_url, timeout=60) as api:
        key = site_key(api, org)["siteKey"]
        sandbox.post(
            "/faults", json={**refusal, "message": f"Invalid parameter {HOSTILE_LABEL}"}
        ).raise_for_status()
        answer = post_events(api, key, [page_event("Purchase", f"order-{uuid.uuid4().hex[:8]}")])
        assert answer.status_code == 200, answer.text
        assert len(answer.json()["rejected"]) == 1
    # When the Events page lists the rejections
    watched.goto("/events.html")
    rejection = watched.locator("#rejections li")
    # Then the platform's message is text with its markup; nothing ran and nothing needed refusing
    expect(rejection).to_have_count(1)
    expect(rejection).to_contain_text(f"Invalid parameter {HOSTILE_LABEL}")
    watched.wait_for_load_state("networkidle")
    assert watched.evaluate("window.__ran") is None
    assert violations(watched) == []
