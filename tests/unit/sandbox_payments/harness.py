"""The payments sandbox in process for its unit tests: a Flask test client, a clock that moves only
when told, and a webhook receiver (an httpx transport) that records each delivery and answers with
the statuses a test queues."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import httpx
from werkzeug.datastructures import MultiDict
from werkzeug.test import TestResponse

from payments_sandbox import AdjustableClock, PaymentsSandboxConfig, PaymentsSandboxState, create_app
from payments_sandbox.events import deliver_due

# The sandbox's clock stands still at the moment the tests start (signatures are checked against the
# real time by the SDK) and moves only when a test advances it.
START = float(int(time.time()))
RECEIVER = "http://shop.test/payments/webhook"


def form(params: Mapping[str, Any], prefix: str = "") -> list[tuple[str, str]]:
    """Nested params as the SDK encodes them: ``a[0][b]=c``, booleans as ``true``/``false``."""
    pairs: list[tuple[str, str]] = []
    for key, value in params.items():
        name = f"{prefix}[{key}]" if prefix else key
        if isinstance(value, Mapping):
            pairs += form(value, name)
        elif isinstance(value, list):
            for index, item in enumerate(value):
                if isinstance(item, Mapping):
                    pairs += form(item, f"{name}[{index}]")
                else:
                    pairs.append((f"{name}[{index}]", str(item)))
        elif isinstance(value, bool):
            pairs.append((name, "true" if value else "false"))
        else:
            pairs.append((name, str(value)))
    return pairs


def mug(**overrides: Any) -> dict[str, Any]:
    """Checkout Session parameters for two mugs at 12.50 USD."""
    params: dict[str, Any] = {
        "mode": "payment",
        "line_items": [
            {
                "price_data": {"currency": "usd", "unit_amount": 1250, "product_data": {"name": "Mug"}},
                "quantity": 2,
            }
        ],
        "success_url": "http://shop.test/paid?session={CHECKOUT_SESSION_ID}",
        "cancel_url": "http://shop.test/product/mug",
    }
    params.update(overrides)
    return params


@dataclass
class Received:
    body: bytes
    headers: dict[str, str]


class Harness:
    """A fresh payments sandbox: ``call`` its API, ``admin`` its admin API, ``deliver`` due webhooks."""

    def __init__(self, config: PaymentsSandboxConfig | None = None) -> None:
        self.config = config or PaymentsSandboxConfig()
        self.state = PaymentsSandboxState(
            self.config, AdjustableClock(lambda: START), transport=httpx.MockTransport(self._receive)
        )
        self.client = create_app(self.state).test_client()
        self.received: list[Received] = []
        # Statuses the receiver answers with, in order (then 200); an exception means no answer.
        self.answers: deque[int | Exception] = deque()

    def _receive(self, request: httpx.Request) -> httpx.Response:
        self.received.append(Received(request.content, dict(request.headers)))
        answer = self.answers.popleft() if self.answers else 200
        if isinstance(answer, Exception):
            raise answer
        return httpx.Response(answer)

    def call(
        self,
        method: str,
        path: str,
        params: Mapping[str, Any] | None = None,
        *,
        account: str | None = None,
        key: str | None = None,
        api_key: str | None = None,
    ) -> TestResponse:
        """An API call with the platform's key (or ``api_key``), as ``account`` and with ``key``."""
        headers = {"Authorization": f"Bearer {api_key or self.config.secret_key}"}
        if account is not None:
            headers["Stripe-Account"] = account
        if key is not None:
            headers["Idempotency-Key"] = key
        pairs = form(params or {})
        if method == "POST":
            return self.client.open(path, method=method, data=MultiDict(pairs), headers=headers)
        return self.client.open(path, method=method, query_string=urlencode(pairs), headers=headers)

    def admin(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        response = self.client.open(f"/_admin{path}", method=method, json=body or {})
        assert response.status_code < 400, response.get_data(as_text=True)
        return response.get_json()

    def account(self, *, onboarded: bool = True) -> str:
        """A new express account with card payments requested; onboarded unless told otherwise."""
        created = self.call(
            "POST",
            "/v1/accounts",
            {"type": "express", "country": "US", "capabilities": {"card_payments": {"requested": True}}},
        )
        account_id: str = created.get_json()["id"]
        if onboarded:
            self.admin("POST", f"/accounts/{account_id}/onboard")
        return account_id

    def session(self, account: str, **overrides: Any) -> dict[str, Any]:
        response = self.call("POST", "/v1/checkout/sessions", mug(**overrides), account=account)
        assert response.status_code == 200, response.get_data(as_text=True)
        body: dict[str, Any] = response.get_json()
        return body

    def endpoint(
        self, events: list[str], *, connect: bool = True, account: str | None = None
    ) -> dict[str, Any]:
        response = self.call(
            "POST",
            "/v1/webhook_endpoints",
            {"url": RECEIVER, "enabled_events": events, "connect": connect},
            account=account,
        )
        assert response.status_code == 200, response.get_data(as_text=True)
        body: dict[str, Any] = response.get_json()
        return body

    def advance(self, seconds: float) -> None:
        self.admin("POST", "/clock", {"seconds": seconds})

    def deliver(self) -> int:
        """Send what is due now; the number of attempts made."""
        return len(deliver_due(self.state))

    def events(self, type_: str | None = None) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = self.admin("GET", f"/events{'?type=' + type_ if type_ else ''}")[
            "events"
        ]
        return found
