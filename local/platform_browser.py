"""A person's browser in the OAuth flow: open the platform's consent page, press a button, follow
the redirect back to the service."""

from __future__ import annotations

import re

import httpx

HIDDEN = re.compile(r'<input type="hidden" name="([^"]+)" value="([^"]*)">')
FORM = re.compile(r'<form method="post" action="([^"]+)">')


def consent(authorization_url: str, decision: str = "approve") -> httpx.Response:
    """Open the dialog, submit ``decision``, and follow the redirect to wherever it leads.

    Returns the final response: the service's callback answer, or the platform's own error page.
    """
    answered = decide(authorization_url, decision)
    if answered.status_code in (301, 302, 303):
        with httpx.Client(timeout=30) as browser:
            return browser.get(answered.headers["location"])
    return answered


def decide(authorization_url: str, decision: str = "approve") -> httpx.Response:
    """Open the dialog and submit ``decision``; returns the platform's answer without following it
    (a redirect to the service carrying ``code`` and ``state``, or the platform's own error page)."""
    with httpx.Client(timeout=30) as browser:
        page = browser.get(authorization_url)
        if page.status_code != 200:
            return page
        action = FORM.search(page.text)
        if action is None:
            raise RuntimeError("no consent form on the dialog page")
        fields = {name: _unescape(value) for name, value in HIDDEN.findall(page.text)}
        return browser.post(_unescape(action.group(1)), data={**fields, "decision": decision})


def _unescape(value: str) -> str:
    return value.replace("&amp;", "&").replace("&quot;", '"').replace("&#x27;", "'").replace("&lt;", "<")
