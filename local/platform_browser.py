"""A person's browser in the OAuth flow: open the platform's consent page, press a button, and do
what the dashboard's ``connect-callback.html`` does with the redirect: post ``code`` and ``state`` to
the API with the signed-in user's JWT."""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlsplit

import httpx

HIDDEN = re.compile(r'<input type="hidden" name="([^"]+)" value="([^"]*)">')
FORM = re.compile(r'<form method="post" action="([^"]+)">')


def consent(
    authorization_url: str, api_url: str, authorization: str, decision: str = "approve"
) -> httpx.Response:
    """Open the dialog, submit ``decision``, and finish as the dashboard's callback page would, signed
    in with ``authorization`` (``Bearer <JWT>``).

    Returns the final response: the API's callback answer, or the platform's own error page.
    """
    answered = decide(authorization_url, decision)
    if answered.status_code in (301, 302, 303):
        return post_callback(answered.headers["location"], api_url, authorization)
    return answered


def post_callback(location: str, api_url: str, authorization: str) -> httpx.Response:
    """What ``connect-callback.html`` does with the platform's redirect ``location``: post the query
    it carries (``code``, ``state``, or ``error`` and ``error_reason``) with the user's JWT."""
    query = dict(parse_qsl(urlsplit(location).query))
    body = {
        "state": query.get("state", ""),
        "code": query.get("code"),
        "error": query.get("error"),
        "errorReason": query.get("error_reason"),
    }
    with httpx.Client(timeout=30) as browser:
        return browser.post(
            f"{api_url}/platform-ads/connect/callback",
            json={key: value for key, value in body.items() if value is not None},
            headers={"Authorization": authorization},
        )


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
