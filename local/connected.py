"""An organization with a dashboard user and a connected ad account, made through the real flow.

Used by the integration tests and the end-to-end benchmarks: a Cognito user signs in, asks the API for
the platform's authorization URL, and a scripted browser approves it in the sandbox's consent dialog.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import httpx

from local.platform_browser import consent
from local.seed import create_user, sign_in
from local.stack import LocalStack


@dataclass
class ConnectedOrg:
    org_id: str
    headers: dict[str, str]


def connected_org(stack: LocalStack, api: httpx.Client) -> ConnectedOrg:
    """A new organization connected to the sandbox's ad account; ``api`` is a client on the gateway."""
    org_id = f"org-{uuid.uuid4().hex[:8]}"
    email = f"{org_id}@example.com"
    _, password = create_user(stack, org_id, email)
    headers = {"Authorization": f"Bearer {sign_in(stack, email, password)}"}
    url = api.post("/platform-ads/connect", headers=headers).json()["authorizationUrl"]
    answer = consent(url, stack.api_url, headers["Authorization"])
    if answer.status_code != 200:
        raise RuntimeError(f"connecting {org_id} failed: the callback answered {answer.status_code}")
    return ConnectedOrg(org_id, headers)


def reconnect(stack: LocalStack, api: httpx.Client, org: ConnectedOrg) -> None:
    """Connect ``org`` again through the consent dialog (after its token was revoked, say)."""
    url = api.post("/platform-ads/connect", headers=org.headers).json()["authorizationUrl"]
    answer = consent(url, stack.api_url, org.headers["Authorization"])
    if answer.status_code != 200:
        raise RuntimeError(f"reconnecting {org.org_id} failed: the callback answered {answer.status_code}")
