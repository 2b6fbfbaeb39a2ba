"""Browser fixtures: Debian's Chromium driven by Playwright, one browser for the session, a fresh
context (cookies, storage) per test, against the one local stack the integration tests share."""

from __future__ import annotations

import json
import shutil
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Playwright, expect, sync_playwright

from local.connected import ConnectedOrg, reconnect
from local.platform_browser import consent
from local.seed import create_user
from local.seed import sign_in as jwt_for
from local.stack import LocalStack
from local.template import ROOT
from tests.integration.browser.this_machine import keep_on_this_machine
from tests.integration.patience import BACKGROUND_JOB_SECONDS

CHROMIUM = Path("/usr/bin/chromium")
AXE = Path(__file__).parent / "node_modules" / "axe-core" / "axe.min.js"
SCREENSHOTS = ROOT / "test-artifacts" / "screenshots"
LAUNCH_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
DESKTOP = {"width": 1280, "height": 800}
# How long an expect() waits for its final state. Playwright's 5 s is a fast machine's: CI runs on 2
# cores at load 20+, where one dashboard call through the local stack (a worker process per function,
# trainings beside it) can take longer than that. A passing expect returns as soon as it holds, so
# only a failure waits the whole time; tests that wait for a background job set a longer one.
EXPECT_TIMEOUT_MS = 30_000
expect.set_options(timeout=EXPECT_TIMEOUT_MS)
PHONE = {"width": 390, "height": 844}


@pytest.fixture(scope="session")
def playwright() -> Iterator[Playwright]:
    if not CHROMIUM.exists():
        pytest.fail(
            "Chromium is missing: run `make test` (it installs Debian's chromium) or apt-get install chromium"
        )
    with sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="session")
def browser(playwright: Playwright) -> Iterator[Browser]:
    browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_FLAGS)
    yield browser
    browser.close()


@pytest.fixture(scope="session")
def dashboard(stack: LocalStack) -> str:
    return stack.dashboard_url


@pytest.fixture
def context(browser: Browser, dashboard: str) -> Iterator[BrowserContext]:
    context = browser.new_context(base_url=dashboard, viewport=DESKTOP)
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=dashboard)
    keep_on_this_machine(context)
    yield context
    context.close()


@pytest.fixture
def page(context: BrowserContext) -> Iterator[Page]:
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    assert not errors, f"uncaught errors in the page: {errors}"


@pytest.fixture(scope="session")
def screenshots() -> Path:
    shutil.rmtree(SCREENSHOTS, ignore_errors=True)
    SCREENSHOTS.mkdir(parents=True)
    return SCREENSHOTS


def axe_violations(page: Page) -> list[dict[str, Any]]:
    """Serious and critical axe-core violations on the page as it is now."""
    if not AXE.exists():
        pytest.fail("axe-core is missing: run `make test` (it runs npm ci in tests/integration/browser)")
    # Evaluated by the driver, not added as an inline script tag: the page's Content-Security-Policy
    # refuses inline script.
    page.evaluate(AXE.read_text())
    result = page.evaluate("async () => await axe.run(document, {resultTypes: ['violations']})")
    return [
        {"id": v["id"], "impact": v["impact"], "help": v["help"], "nodes": [n["target"] for n in v["nodes"]]}
        for v in result["violations"]
        if v["impact"] in ("serious", "critical")
    ]


def sign_in(page: Page, email: str, password: str, then: str = "connection.html") -> None:
    page.goto("/index.html")
    page.get_by_label("E-mail").fill(email)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"**/{then}")


def refresh_until(page: Page, done: Callable[[], bool], *, seconds: float = BACKGROUND_JOB_SECONDS) -> None:
    """Press the page's Refresh list until ``done()`` holds, as a person watching a background job
    does (the list is not pushed): the job's time depends on the machine's load, so the wait is
    bounded by a deadline, not by a count of presses."""
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, f"not done within {seconds} s"
        page.get_by_role("button", name="Refresh list").click()
        page.wait_for_timeout(1000)


def dump(value: Any) -> str:
    return json.dumps(value, indent=2)


@dataclass(frozen=True)
class ShopUser:
    """A dashboard user of an organization with a connected ad account and a synced, trained shop."""

    email: str
    password: str
    org: ConnectedOrg


@pytest.fixture(scope="session")
def synced_shop(stack: LocalStack) -> ShopUser:
    """Made once through the API as the dashboard makes it: connect (the sandbox's consent page),
    three files PUT to upload links, a sync, both models trained."""
    return make_synced_user(stack)


@pytest.fixture
def synced_user(stack: LocalStack, synced_shop: ShopUser) -> ShopUser:
    """The session's synced shop, its ad account connected again for this test: a test that resets the
    sandbox's scenario (the ``sandbox`` fixture) ends every token issued before it, so the shop's
    connection would otherwise depend on which tests ran first."""
    with httpx.Client(base_url=stack.api_url, timeout=30) as api:
        reconnect(stack, api, synced_shop.org)
    return synced_shop


def make_synced_user(stack: LocalStack, n_users: int = 300) -> ShopUser:
    """A new organization's user, connected, with a synced shop of ``n_users`` customers (seed 4) and
    both models trained."""
    from tests.integration.test_data_source import shop_files, upload_shop, wait_for_sync

    org_id = f"org-{uuid.uuid4().hex[:8]}"
    email = f"{org_id}@example.com"
    _, password = create_user(stack, org_id, email)
    org = ConnectedOrg(org_id, {"Authorization": f"Bearer {jwt_for(stack, email, password)}"})
    with httpx.Client(base_url=stack.api_url, timeout=30) as api:
        url = api.post("/platform-ads/connect", headers=org.headers).json()["authorizationUrl"]
        assert consent(url, stack.api_url, org.headers["Authorization"]).status_code == 200
        upload_id = upload_shop(api, org, shop_files(n_users=n_users, seed=4))
        started = api.post(
            "/platform-ads/data-source/sync", json={"uploadId": upload_id}, headers=org.headers
        )
        assert started.status_code == 202, started.text
        wait_for_sync(api, org, started.json()["syncId"], trained=True)
    return ShopUser(email, password, org)
