"""Every dashboard page loads without a console error or a missing file in Chromium: the browser asks
each page for its icon, and a page without one showed 'Failed to load resource: 404' for
/favicon.ico in the console of every page (found walking make dev)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Browser, ConsoleMessage, Page, Response, expect

from local.seed import DemoCredentials
from local.stack import LocalStack
from local.template import ROOT
from tests.integration.browser.conftest import DESKTOP, sign_in
from tests.integration.browser.test_content_security_policy import SIGNED_IN_PAGES

pytestmark = pytest.mark.integration

PAGES = sorted(path.name for path in (ROOT / "dashboard").glob("*.html"))
# Pages a person reaches without signing in (the callbacks are opened by the platform and the
# payment provider; without their query they say the link is incomplete).
PUBLIC_PAGES = ["index.html", "closed.html", "connect-callback.html", "payments-callback.html"]


class Troubles:
    """What the browser reported going wrong on the page: console errors and answers of 400 or more."""

    def __init__(self, page: Page) -> None:
        self.errors: list[str] = []
        self.failed: list[str] = []
        page.on("console", self._console)
        page.on("response", self._response)

    def _console(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            self.errors.append(f"{message.location.get('url')}: {message.text}")

    def _response(self, response: Response) -> None:
        if response.status >= 400:
            self.failed.append(f"{response.status} {response.url}")


@pytest.fixture
def unrouted_page(browser: Browser, dashboard: str) -> Iterator[Page]:
    """A page in a context without request interception. Chromium asks for a page's icon only when
    no request is intercepted, and the other browser tests' contexts intercept every request that
    would leave this machine (``keep_on_this_machine``), so they never see a missing icon. The pages
    opened here call only the local stack."""
    context = browser.new_context(base_url=dashboard, viewport=DESKTOP)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    context.close()
    assert not errors, f"uncaught errors in the page: {errors}"


def test_the_page_lists_cover_every_page_of_the_dashboard() -> None:
    assert sorted({*PUBLIC_PAGES, *SIGNED_IN_PAGES}) == PAGES


@pytest.mark.parametrize("path", PAGES)
def test_every_page_declares_an_icon_the_dashboard_serves(stack: LocalStack, path: str) -> None:
    # Given the page as the dashboard serves it
    page = httpx.get(f"{stack.dashboard_url}/{path}")
    assert page.status_code == 200
    # Then it names its icon, and the icon is there, as an image
    assert '<link rel="icon" href="favicon.svg" type="image/svg+xml">' in page.text
    icon = httpx.get(f"{stack.dashboard_url}/favicon.svg")
    assert icon.status_code == 200
    assert icon.headers["content-type"].startswith("image/svg+xml")
    assert icon.text.lstrip().startswith("<svg")


def test_no_page_shows_a_console_error_or_a_missing_file(unrouted_page: Page, demo: DemoCredentials) -> None:
    page = unrouted_page
    troubles = Troubles(page)
    # When: the public pages, then every page of a signed-in user, each to its final state
    for path in PUBLIC_PAGES:
        page.goto(f"/{path}")
        page.wait_for_load_state("networkidle")
    sign_in(page, demo.email, demo.password)
    for path in SIGNED_IN_PAGES:
        page.goto(f"/{path}")
        expect(page.get_by_text(f"Signed in as {demo.email}")).to_be_visible()
        page.wait_for_load_state("networkidle")
    page.goto("/index.html")
    page.wait_for_load_state("networkidle")

    # Then: the browser reported nothing wrong on any of them
    assert troubles.failed == []
    assert troubles.errors == []
