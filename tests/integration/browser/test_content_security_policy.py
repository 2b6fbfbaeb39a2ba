"""The dashboard runs under its Content-Security-Policy in Chromium: every page is served with it,
the pages do their work without a single violation, script planted in the page (an inline script,
an inline handler) is refused and reported by the browser, and markup a merchant or the platform
puts in a field (a key label, an audience name, the platform's error message) is shown as text."""

from __future__ import annotations

import re
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
