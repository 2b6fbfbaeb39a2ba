"""``GraphClient``: the one place the service speaks HTTP to the advertising platform.

It talks to ``{graph_url}/{version}/…`` (Meta's Graph API, or the local platform sandbox), sends the
access token in the ``Authorization`` header with an ``appsecret_proof`` on every call, encodes
parameters the way the Graph API expects, retries per ``shared.platform.retry``, reads usage headers
and raises typed ``PlatformError``s. Operations (audiences, campaigns, OAuth) are plain functions in
sibling modules that take a client.
"""

from __future__ import annotations

import copy
import json
import random
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Self
from urllib.parse import urlsplit

import httpx

from shared import deadline
from shared.observability import logger
from shared.platform.encoding import appsecret_proof, encode_params, redact_url, strip_params
from shared.platform.errors import (
    OUT_OF_TIME,
    THROTTLED,
    UNAVAILABLE,
    GraphErrorDetail,
    PlatformError,
    PlatformOutOfTime,
    PlatformThrottled,
    build_error,
    classify,
    generic_error,
    read_error,
    rejects_token,
)
from shared.platform.retry import RetryPolicy, should_retry_error, should_retry_transport
from shared.platform.usage import UsageSnapshot, parse_usage
from shared.settings import Settings

Sleep = Callable[[float], None]
# Told when the platform refuses the client's access token, before the error is raised.
TokenRejected = Callable[[GraphErrorDetail], None]
TRACE_HEADER = "x-fb-trace-id"
# An attempt with less time than this left is not sent: the platform rarely answers that fast.
MIN_ATTEMPT_SECONDS = 1.0
# The Retry-After of an answer the platform did not give in time, when no wait is known.
OUT_OF_TIME_RETRY_AFTER_SECONDS = 5.0


def _utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class GraphResponse:
    """A successful call: the decoded JSON body and the usage the platform reported with it."""

    body: dict[str, Any]
    usage: UsageSnapshot


class GraphClient:
    """Synchronous Graph API client for one access token (or none, for the OAuth exchanges).

    Collaborators are injectable so tests run without network or real sleeps: ``http`` (a shared
    ``httpx.Client``, e.g. one per Lambda container) or ``transport`` (e.g. ``httpx.MockTransport``),
    ``sleep``, ``jitter`` (random numbers in [0, 1)) and ``clock``.

    Inside a Lambda invocation (``shared.deadline``) every attempt, retry and pause fits the time the
    function has left, less ``deadline.PLATFORM_RESERVE_SECONDS``: an attempt's timeout is
    ``timeout_seconds`` or less, and a call that cannot be answered in time raises
    ``PlatformOutOfTime`` (503 with Retry-After), or ``PlatformThrottled`` when the wait that does not
    fit is the platform's own (throttling, a usage pause).
    """

    def __init__(
        self,
        *,
        base_url: str,
        version: str,
        app_id: str,
        app_secret: str,
        access_token: str | None = None,
        timeout_seconds: float = 30.0,
        max_retries: int = 5,
        backoff_base_seconds: float = 1.0,
        max_wait_seconds: float = 300.0,
        usage_pause_seconds: float = 60.0,
        sleep: Sleep = time.sleep,
        http: httpx.Client | None = None,
        transport: httpx.BaseTransport | None = None,
        jitter: Callable[[], float] = random.random,
        clock: Callable[[], datetime] = _utc_now,
    ) -> None:
        self.app_id = app_id
        self._app_secret = app_secret
        self._timeout_seconds = timeout_seconds
        self._root = f"{base_url.rstrip('/')}/{version.strip('/')}/"
        self._policy = RetryPolicy(
            max_retries=max_retries,
            backoff_base_seconds=backoff_base_seconds,
            max_wait_seconds=max_wait_seconds,
            usage_pause_seconds=usage_pause_seconds,
        )
        self._sleep = sleep
        self._jitter = jitter
        self._clock = clock
        self._owns_http = http is None
        self._http = http or httpx.Client(transport=transport, timeout=timeout_seconds)
        self._wait_limit: Callable[[], float] | None = None
        self._on_token_rejected: TokenRejected | None = None
        self._set_token(access_token)

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        access_token: str | None = None,
        *,
        app_secret: str,
        http: httpx.Client | None = None,
        sleep: Sleep = time.sleep,
    ) -> Self:
        """A client configured from the service settings and the app secret (read from the secret
        store by the caller), for ``access_token`` (None for OAuth calls)."""
        return cls(
            base_url=settings.platform_graph_url,
            version=settings.platform_api_version,
            app_id=settings.platform_app_id,
            app_secret=app_secret,
            access_token=access_token,
            timeout_seconds=settings.platform_timeout_seconds,
            max_retries=settings.platform_max_retries,
            backoff_base_seconds=settings.platform_backoff_base_seconds,
            usage_pause_seconds=settings.platform_usage_pause_seconds,
            sleep=sleep,
            http=http,
        )

    def with_access_token(
        self, access_token: str | None, *, on_token_rejected: TokenRejected | None = None
    ) -> GraphClient:
        """A client with the same configuration and connection pool, calling with another token.

        ``on_token_rejected`` is called when the platform refuses that token on any call (190, 102,
        or a token subcode such as 460), so the owner of the token can record it at once; it is not
        carried over to clients made from this one with other tokens.
        """
        clone = copy.copy(self)
        clone._owns_http = False
        clone._set_token(access_token)
        clone._on_token_rejected = on_token_rejected
        return clone

    def limit_waits(self, seconds: Callable[[], float]) -> GraphClient:
        """This client, never sleeping longer than ``seconds()`` (read before each wait): a longer wait
        is raised as ``PlatformThrottled`` with the wait, so a function never sleeps past its own
        remaining time, and a state machine task hands throttling to a ``Wait`` state."""
        self._wait_limit = seconds
        return self

    def _max_wait(self) -> float:
        limit = self._policy.max_wait_seconds
        return limit if self._wait_limit is None else max(0.0, min(limit, self._wait_limit()))

    @staticmethod
    def _deadline_wait() -> float:
        """The longest wait after which an attempt still fits the invocation's time (inf outside one)."""
        left = deadline.call_timeout(float("inf"), reserve=deadline.PLATFORM_RESERVE_SECONDS)
        return left - MIN_ATTEMPT_SECONDS

    def _attempt_timeout(self, detail: GraphErrorDetail | None) -> float:
        """The next attempt's timeout: ``timeout_seconds``, or the time the invocation has left for
        it; ``PlatformOutOfTime`` when that is too short to send it at all."""
        timeout = deadline.call_timeout(self._timeout_seconds, reserve=deadline.PLATFORM_RESERVE_SECONDS)
        if timeout < MIN_ATTEMPT_SECONDS:
            raise self._out_of_time(detail)
        return timeout

    @property
    def app_access_token(self) -> str:
        """The app access token ``{app_id}|{app_secret}`` (for ``debug_token``). Never log it."""
        return f"{self.app_id}|{self._app_secret}"

    def client_credentials(self) -> dict[str, str]:
        """``client_id`` and ``client_secret`` parameters for the OAuth token exchanges. Never log them."""
        return {"client_id": self.app_id, "client_secret": self._app_secret}

    @property
    def last_usage(self) -> UsageSnapshot | None:
        """The usage reported on the latest response (None before the first call)."""
        return self._last_usage

    def close(self) -> None:
        """Close the connection pool if this client created it."""
        if self._owns_http:
            self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # --- Calls ----------------------------------------------------------------------------------

    def get(
        self, path: str, params: Mapping[str, Any] | None = None, *, idempotent: bool = True
    ) -> GraphResponse:
        """GET ``path`` (relative to the versioned root) with ``params`` in the query string."""
        return self._call("GET", self._url(path), params, idempotent=idempotent)

    def post(
        self,
        path: str,
        data: Mapping[str, Any] | None = None,
        *,
        idempotent: bool = False,
        json_body: bool = False,
    ) -> GraphResponse:
        """POST ``data`` as a form body (nested values as JSON strings, as the SDK sends them), or,
        with ``json_body``, as one ``application/json`` body with nested values as plain objects
        (docs/platform-notes.md §3.1): for member uploads, whose 10,000-row payloads cost far more to
        percent-encode (and for the receiver to decode) than to write as JSON. Creates are not
        idempotent unless the caller says so."""
        return self._call("POST", self._url(path), data, idempotent=idempotent, json_body=json_body)

    def delete(
        self, path: str, data: Mapping[str, Any] | None = None, *, idempotent: bool = True
    ) -> GraphResponse:
        """DELETE with ``data`` in a form body, never the URL (user lists exceed URL limits)."""
        return self._call("DELETE", self._url(path), data, idempotent=idempotent)

    def iterate(self, path: str, params: Mapping[str, Any] | None = None) -> Iterator[dict[str, Any]]:
        """Every item of a paged edge, following ``paging.next`` until it is absent.

        Cursors alone do not mean there is another page: the platform omits ``next`` on the last page
        even when ``cursors.after`` is present.
        """
        response = self.get(path, params)
        while True:
            for item in response.body.get("data") or []:
                if isinstance(item, dict):
                    yield item
            paging = response.body.get("paging")
            next_url = paging.get("next") if isinstance(paging, dict) else None
            if not next_url:
                return
            response = self._call("GET", self._paging_url(str(next_url)), None, idempotent=True)

    # --- Internals ------------------------------------------------------------------------------

    def _set_token(self, access_token: str | None) -> None:
        self._access_token = access_token
        self._proof = appsecret_proof(self._app_secret, access_token) if access_token else None
        self._last_usage: UsageSnapshot | None = None
        self._pending_pause = 0.0

    def _url(self, path: str) -> str:
        if "://" in path:
            raise ValueError("Pass a path relative to the Graph root, not a URL")
        return self._root + path.lstrip("/")

    def _paging_url(self, next_url: str) -> str:
        # Paging links embed the access token; it travels in the header instead, and only to our host.
        if urlsplit(next_url)[:2] != urlsplit(self._root)[:2]:
            raise generic_error(
                GraphErrorDetail(
                    http_status=200, message="The platform returned a paging link to another host."
                )
            )
        return strip_params(next_url, frozenset({"access_token", "appsecret_proof"}))

    def _call(
        self,
        method: str,
        url: str,
        params: Mapping[str, Any] | None,
        *,
        idempotent: bool,
        json_body: bool = False,
    ) -> GraphResponse:
        content: bytes | None = None
        fields: dict[str, str] = {} if json_body else encode_params(params)
        if self._proof:
            fields["appsecret_proof"] = self._proof
        if json_body:
            # Encoded once, not per attempt: a retry sends the same bytes.
            values = {key: value for key, value in (params or {}).items() if value is not None}
            content = json.dumps({**values, **fields}, separators=(",", ":")).encode()
        attempt = 0
        detail: GraphErrorDetail | None = None
        while True:
            self._pause_before_call()
            timeout = self._attempt_timeout(detail)
            try:
                response = self._send(method, url, fields, content, timeout)
            except httpx.TransportError as error:
                if isinstance(error, httpx.TimeoutException) and timeout < self._timeout_seconds:
                    # Cut short by the invocation's time, not by the platform's usual slowness.
                    raise self._out_of_time(detail) from error
                if attempt >= self._policy.max_retries or not should_retry_transport(
                    error, idempotent=idempotent
                ):
                    raise build_error(UNAVAILABLE) from error
                backoff = self._policy.backoff_seconds(attempt, self._jitter())
                if backoff > self._deadline_wait():
                    raise self._out_of_time(detail, backoff) from error
                self._schedule_retry(method, url, attempt, backoff)
                attempt += 1
                continue
            body, usage, detail = self._read(response)
            if detail is None:
                return GraphResponse(body=body, usage=usage)
            if attempt >= self._policy.max_retries or not should_retry_error(detail, idempotent=idempotent):
                raise self._final_error(detail, usage)
            wait = self._policy.error_wait(attempt, self._jitter(), detail, usage)
            if wait > self._max_wait():
                raise self._throttled(detail, wait)
            if wait > self._deadline_wait():
                # No time for the retry: the platform's own wait (throttling) says when to come back.
                raise (
                    self._throttled(detail, wait) if detail.is_throttling else self._out_of_time(detail, wait)
                )
            self._schedule_retry(method, url, attempt, wait, detail)
            attempt += 1

    def _send(
        self, method: str, url: str, fields: dict[str, str], content: bytes | None, timeout: float
    ) -> httpx.Response:
        headers = {"Authorization": f"Bearer {self._access_token}"} if self._access_token else {}
        limit = httpx.Timeout(timeout)
        if content is not None:
            headers["Content-Type"] = "application/json"
            return self._http.request(method, url, content=content, headers=headers, timeout=limit)
        if method == "GET":
            # Merged explicitly: httpx's ``params=`` would replace a paging URL's own query string.
            return self._http.request(
                method, httpx.URL(url).copy_merge_params(fields), headers=headers, timeout=limit
            )
        return self._http.request(method, url, data=fields, headers=headers, timeout=limit)

    def _read(
        self, response: httpx.Response
    ) -> tuple[dict[str, Any], UsageSnapshot, GraphErrorDetail | None]:
        usage = parse_usage(response.headers, self._clock())
        self._last_usage = usage
        self._pending_pause = self._policy.usage_pause(usage)
        try:
            body: Any = response.json()
        except ValueError:
            body = None
        if body is True:  # a few mutations answer a bare ``true``
            body = {"success": True}
        detail = read_error(response.status_code, body, response.headers.get(TRACE_HEADER))
        return (body if isinstance(body, dict) else {}), usage, detail

    def _pause_before_call(self) -> None:
        """Sleep the pause the last response or failure asked for; hand overlong ones to the caller."""
        pause, self._pending_pause = self._pending_pause, 0.0
        if pause <= 0:
            return
        if pause > min(self._max_wait(), self._deadline_wait()):
            # Refused rather than shortened (the platform asked for it). Nothing was sent for this
            # call yet, so the caller can safely retry it after the wait.
            raise self._throttled(None, pause)
        self._sleep(pause)

    def _schedule_retry(
        self, method: str, url: str, attempt: int, wait: float, detail: GraphErrorDetail | None = None
    ) -> None:
        self._pending_pause = max(self._pending_pause, wait)
        logger.warning(
            "Retrying platform call",
            extra={
                "method": method,
                "url": redact_url(url),
                "attempt": attempt + 1,
                "wait_seconds": round(self._pending_pause, 3),
                "platform_code": detail.code if detail else None,
                "platform_subcode": detail.subcode if detail else None,
                "fbtrace_id": detail.fbtrace_id if detail else None,
            },
        )

    def _final_error(self, detail: GraphErrorDetail, usage: UsageSnapshot) -> PlatformError:
        logger.warning(
            "Platform call failed",
            extra={
                "http_status": detail.http_status,
                "platform_code": detail.code,
                "platform_subcode": detail.subcode,
                "platform_type": detail.type,
                "fbtrace_id": detail.fbtrace_id,
            },
        )
        if detail.is_throttling:
            return self._throttled(
                detail, max(self._policy.usage_pause(usage), self._policy.usage_pause_seconds)
            )
        if self._on_token_rejected is not None and rejects_token(detail):
            try:
                self._on_token_rejected(detail)
            except Exception:  # recording it must not hide what the platform said
                logger.exception("recording a rejected platform token failed")
        return classify(detail)

    def _out_of_time(self, detail: GraphErrorDetail | None, wait: float = 0.0) -> PlatformOutOfTime:
        logger.warning(
            "Platform call out of time",
            extra={
                "seconds_left": deadline.seconds_left(),
                "wait_seconds": round(wait, 3),
                "platform_code": detail.code if detail else None,
                "fbtrace_id": detail.fbtrace_id if detail else None,
            },
        )
        return PlatformOutOfTime(
            OUT_OF_TIME.message,
            remedy=OUT_OF_TIME.remedy,
            detail=detail,
            retry_after_seconds=max(wait, OUT_OF_TIME_RETRY_AFTER_SECONDS),
        )

    def _throttled(self, detail: GraphErrorDetail | None, retry_after_seconds: float) -> PlatformThrottled:
        return PlatformThrottled(
            THROTTLED.message, remedy=THROTTLED.remedy, detail=detail, retry_after_seconds=retry_after_seconds
        )
