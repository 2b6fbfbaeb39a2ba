"""An organization with a dashboard user and a connected ad account, made through the real flow."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import httpx

from local.seed import create_user, sign_in
from local.stack import LocalStack
from tests.integration.platform_browser import consent


@dataclass
class ConnectedOrg:
    org_id: str
    headers: dict[str, str]


def connected_org(stack: LocalStack, api: httpx.Client) -> ConnectedOrg:
    org_id = f"org-{uuid.uuid4().hex[:8]}"
    email = f"{org_id}@example.com"
    _, password = create_user(stack, org_id, email)
    headers = {"Authorization": f"Bearer {sign_in(stack, email, password)}"}
    url = api.post("/platform-ads/connect", headers=headers).json()["authorizationUrl"]
    assert consent(url).status_code == 200
    return ConnectedOrg(org_id, headers)
