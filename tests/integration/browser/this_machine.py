"""The browser tests' pages reach this machine's servers only (the stack, the sandboxes, a test's own
shop): a request that would leave it is aborted, which fails the page and so the test."""

from __future__ import annotations

import re

from playwright.sync_api import BrowserContext

# Every address but this machine's. A regular expression, not a function: Playwright's driver matches it
# itself, so a request to this machine is never handed to the test's thread. The sync API runs a route
# handler only while the test is inside a Playwright call (microsoft/playwright#31101): a handler
# called for every request held each page's own request (the shop snippet's fetch) until the test's next
# Playwright call, however long the test waited for its effect elsewhere.
LEAVES_THIS_MACHINE = re.compile(r"^(?!http://(127\.0\.0\.1|localhost)(:\d+)?(/|$))")


def keep_on_this_machine(context: BrowserContext) -> None:
    """Abort every request of ``context``'s pages that would leave this machine (the page sees
    ``net::ERR_BLOCKED_BY_CLIENT``); a request to this machine goes out at once, whatever the test's
    thread is doing."""
    context.route(LEAVES_THIS_MACHINE, lambda route: route.abort("blockedbyclient"))
