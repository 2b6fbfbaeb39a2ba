"""The platform sandbox in process, for unit tests of the services that call the platform.

The service code talks to it through a real ``GraphClient`` over ``httpx.WSGITransport``, so every
request is encoded, answered and classified exactly as over the network, and the platform's rules
(sessions, batch limits, seed sizes, faults) are the sandbox's, not the test's.
"""

from __future__ import annotations

import json
from typing import Any

import httpx

from platform_sandbox import SandboxConfig, SandboxState, create_app
from platform_sandbox.scenarios import BUSINESS_ACCOUNT_ID
from shared.platform.client import GraphClient

GRAPH_URL = "http://graph.sandbox.test"
VERSION = "v25.0"
AD_ACCOUNT_ID = f"act_{BUSINESS_ACCOUNT_ID}"


class SandboxPlatform:
    """A fresh sandbox world, a Graph client factory, and the sandbox's admin API."""

    def __init__(self, config: SandboxConfig | None = None) -> None:
        self.config = config or SandboxConfig()
        self.state = SandboxState(self.config)
        self.app = create_app(self.state)
        self._admin = self.app.test_client()
        self.sleeps: list[float] = []

    def graph(self, access_token: str | None = None, *, max_retries: int = 1) -> GraphClient:
        """A client with the app's credentials (and ``access_token``); retries do not really sleep."""
        return GraphClient(
            base_url=GRAPH_URL,
            version=VERSION,
            app_id=self.config.app_id,
            app_secret=self.config.app_secret,
            access_token=access_token,
            max_retries=max_retries,
            sleep=self.sleeps.append,
            transport=httpx.WSGITransport(app=self.app),
        )

    def admin(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        """Call ``/_admin<path>`` and return its JSON; fails the test on an error status."""
        response = self._admin.open(f"/_admin{path}", method=method, json=body)
        assert response.status_code < 400, response.get_data(as_text=True)
        return response.get_json()

    def user_token(self, **wanted: Any) -> str:
        token: str = self.admin("POST", "/tokens", wanted)["access_token"]
        return token

    def fault(self, **spec: Any) -> None:
        """Queue a fault (``platform_sandbox.faults.FaultSpec``) on the next matching calls."""
        self.admin("POST", "/faults", spec)

    def member_count(self, audience_id: str) -> int:
        count: int = self.admin("GET", f"/audiences/{audience_id}/members")["count"]
        return count

    def audience_exists(self, audience_id: str) -> bool:
        """Whether the platform has the audience (created and not deleted)."""
        audience = self.state.world.audiences.get(audience_id)
        return audience is not None and not audience.deleted

    def calls(self, path: str = ".*", method: str | None = None) -> list[dict[str, Any]]:
        """The Graph calls received, oldest first, optionally only those whose path matches ``path``."""
        query = f"?path={path}" + (f"&method={method}" if method else "")
        entries: list[dict[str, Any]] = self.admin("GET", f"/requests{query}")["requests"]
        return entries

    def upload_sessions(self, path: str = r"/users$") -> list[tuple[int, int]]:
        """``(session_id, batch_seq)`` of every upload call that the platform accepted, in order."""
        sent = []
        for call in self.calls(path, method="POST"):
            if call["status"] == 200:
                # A form field holds JSON text; a JSON body (how the service uploads) the object.
                raw = call["params"]["session"]
                session = json.loads(raw) if isinstance(raw, str) else raw
                sent.append((int(session["session_id"]), int(session["batch_seq"])))
        return sent

    def forget_calls(self) -> None:
        self.admin("DELETE", "/requests")
