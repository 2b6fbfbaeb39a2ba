"""A person's browser in the payments onboarding: open the provider's onboarding link, fill in its
page and submit (or leave for later), and do what the dashboard's ``payments-callback.html`` does
with the redirect: post the ``state`` to the API with the signed-in user's JWT.

Used by the integration tests, the sample events' set-up and the seeding of a payments account.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlsplit

import httpx

NONCE = re.compile(r'<input type="hidden" name="nonce" value="([^"]*)">')


def onboard(
    onboarding_url: str, *, business_name: str = "Ada's Mugs", decision: str = "submit"
) -> httpx.Response:
    """Open the onboarding link and submit its form (``submit``: agree and submit; ``later``: finish
    later); returns the provider's answer without following it (a redirect to the return or refresh
    URL, or the provider's own page)."""
    with httpx.Client(timeout=30) as browser:
        page = browser.get(onboarding_url)
        if page.status_code != 200:
            return page
        nonce = NONCE.search(page.text)
        if nonce is None:
            raise RuntimeError("no onboarding form on the page")
        return browser.post(
            onboarding_url,
            data={
                "nonce": nonce.group(1),
                "business_name": business_name,
                "agree": "yes",
                "decision": decision,
            },
        )


def post_payments_callback(location: str, api_url: str, authorization: str) -> httpx.Response:
    """What ``payments-callback.html`` does with the provider's redirect ``location``: post its
    ``state`` with the user's JWT."""
    state = dict(parse_qsl(urlsplit(location).query)).get("state", "")
    with httpx.Client(timeout=30) as browser:
        return browser.post(
            f"{api_url}/payments/connect/callback",
            json={"state": state},
            headers={"Authorization": authorization},
        )


def connect_payments(
    api_url: str, authorization: str, *, business_name: str = "Ada's Mugs"
) -> httpx.Response:
    """Connect the signed-in user's organization's payments account through the provider's page, to
    the end; returns the callback's answer (the status)."""
    with httpx.Client(timeout=30) as api:
        started = api.post(f"{api_url}/payments/connect", headers={"Authorization": authorization})
    if started.status_code != 200:
        return started
    answered = onboard(started.json()["onboardingUrl"], business_name=business_name)
    if answered.status_code not in (302, 303):
        return answered
    return post_payments_callback(answered.headers["location"], api_url, authorization)
