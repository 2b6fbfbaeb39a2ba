"""The sandbox over real HTTP: what the service's httpx client and the local stack will see."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from platform_sandbox import SandboxConfig, SandboxServer
from platform_sandbox.scenarios import BUSINESS_ACCOUNT_ID

pytestmark = pytest.mark.integration

REDIRECT = "http://localhost:3000/platform-ads/connect/callback"
ACCOUNT = f"act_{BUSINESS_ACCOUNT_ID}"
REPO_ROOT = Path(__file__).resolve().parents[2]


class FormReader(HTMLParser):
    """Collects the consent page's forms: action, hidden inputs and button value."""

    def __init__(self) -> None:
        super().__init__()
        self.forms: list[dict[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {key: value or "" for key, value in attrs}
        if tag == "form":
            self.forms.append({"__action__": values["action"]})
        elif tag in ("input", "button") and self.forms:
            self.forms[-1][values["name"]] = values["value"]


@pytest.fixture(scope="module")
def sandbox() -> Iterator[SandboxServer]:
    with SandboxServer(SandboxConfig()) as server:
        yield server


@pytest.fixture
def http(sandbox: SandboxServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=sandbox.url, timeout=10) as client:
        client.post("/_admin/reset").raise_for_status()
        yield client


def user_token(http: httpx.Client) -> str:
    token: str = http.post("/_admin/tokens", json={}).json()["access_token"]
    return token


def new_audience(http: httpx.Client, headers: dict[str, str], name: str) -> str:
    form = {"name": name, "subtype": "CUSTOM", "customer_file_source": "USER_PROVIDED_ONLY"}
    audience_id: str = http.post(f"/v25.0/{ACCOUNT}/customaudiences", headers=headers, data=form).json()["id"]
    return audience_id


def test_browser_consent_and_code_exchange(sandbox: SandboxServer, http: httpx.Client) -> None:
    # Given the consent page a browser opens
    page = http.get(
        "/v25.0/dialog/oauth",
        params={
            "client_id": sandbox.config.app_id,
            "redirect_uri": REDIRECT,
            "state": "st",
            "scope": "ads_management",
        },
    )
    reader = FormReader()
    reader.feed(page.text)
    approve = next(form for form in reader.forms if form.get("decision") == "approve")
    # When the user clicks Approve and the service exchanges the code
    action = approve.pop("__action__")
    redirect = http.post(action, data=approve)
    code = parse_qs(urlsplit(redirect.headers["location"]).query)["code"][0]
    exchanged = http.get(
        "/v25.0/oauth/access_token",
        params={
            "client_id": sandbox.config.app_id,
            "client_secret": sandbox.config.app_secret,
            "redirect_uri": REDIRECT,
            "code": code,
        },
    )
    # Then the token reads the marketer's ad accounts
    token = exchanged.json()["access_token"]
    accounts = http.get("/v25.0/me/adaccounts", headers={"Authorization": f"Bearer {token}"})
    assert redirect.status_code == 302
    assert [account["id"] for account in accounts.json()["data"]] == [ACCOUNT]


def test_audience_upload_in_batches_over_http(http: httpx.Client) -> None:
    # Given an audience and 250 hashed e-mails sent in three batches of one session
    headers = {"Authorization": f"Bearer {user_token(http)}"}
    audience_id = new_audience(http, headers, "Buyers")
    emails = [hashlib.sha256(f"u{i}@example.com".encode()).hexdigest() for i in range(250)]
    batches = [emails[0:100], emails[100:200], emails[200:250]]
    # When the batches are posted as JSON bodies
    results = [
        http.post(
            f"/v25.0/{audience_id}/users",
            headers=headers,
            json={
                "payload": {"schema": "EMAIL_SHA256", "data": batch},
                "session": {"session_id": 77, "batch_seq": seq, "last_batch_flag": seq == len(batches)},
            },
        ).json()
        for seq, batch in enumerate(batches, start=1)
    ]
    # Then the session counted every row once and the audience holds them all
    assert [result["num_received"] for result in results] == [100, 200, 250]
    node = http.get(
        f"/v25.0/{audience_id}", headers=headers, params={"fields": "approximate_count_lower_bound"}
    )
    assert node.json()["approximate_count_lower_bound"] == 250


def test_throttle_fault_reaches_the_client_with_headers(http: httpx.Client) -> None:
    # Given a queued throttle on custom-audience listing
    http.post("/_admin/faults", json={"kind": "throttle", "path": "customaudiences$", "regain_minutes": 3})
    # When the client lists audiences
    response = http.get(
        f"/v25.0/{ACCOUNT}/customaudiences", headers={"Authorization": f"Bearer {user_token(http)}"}
    )
    # Then it sees a 400 with code 80003 and a BUC header with the regain estimate
    usage = json.loads(response.headers["x-business-use-case-usage"])
    assert (response.status_code, response.json()["error"]["code"]) == (400, 80003)
    assert usage[BUSINESS_ACCOUNT_ID][0]["estimated_time_to_regain_access"] == 3


def test_concurrent_uploads_lose_no_member(http: httpx.Client, sandbox: SandboxServer) -> None:
    # Given an audience and eight batches sent at once from threads
    headers = {"Authorization": f"Bearer {user_token(http)}"}
    audience_id = new_audience(http, headers, "Concurrent")

    def send(seq: int) -> int:
        rows = [hashlib.sha256(f"{seq}-{i}".encode()).hexdigest() for i in range(50)]
        body = {
            "payload": {"schema": "EMAIL_SHA256", "data": rows},
            "session": {"session_id": 1, "batch_seq": seq},
        }
        with httpx.Client(base_url=sandbox.url, timeout=10) as own:
            return own.post(f"/v25.0/{audience_id}/users", headers=headers, json=body).status_code

    # When all eight land concurrently
    with ThreadPoolExecutor(max_workers=8) as pool:
        statuses = list(pool.map(send, range(1, 9)))
    # Then every row of every batch is a member
    assert statuses == [200] * 8
    assert http.get(f"/_admin/audiences/{audience_id}/members").json()["count"] == 400


def test_command_line_prints_its_url_and_serves() -> None:
    # Given the sandbox started as `python -m platform_sandbox` on a free port
    process = subprocess.Popen(
        [sys.executable, "-m", "platform_sandbox", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=REPO_ROOT,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        # When its printed URL is called
        url = re.search(r"http://127\.0\.0\.1:\d+", line)
        assert url is not None, line
        response = httpx.get(f"{url.group(0)}/_admin/state", timeout=10)
        # Then it answers with the default scenario
        assert response.json()["scenario"] == "default"
    finally:
        process.terminate()
        process.wait(timeout=10)
