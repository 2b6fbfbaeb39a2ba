"""A slow platform through the local stack: a function behind the HTTP API answers 503 with a body
and Retry-After before its 29 s are up, instead of being cut off (issue 24, item 3).

Before the time budgets the platform client waited up to 30 s per attempt with five retries: the
function ran into its Timeout and API Gateway answered the caller a 503 without a body. This test
pays the real wait once (about 26 s): the gateway gives the function the remaining time of its
template ``Timeout`` and the sandbox holds its answer for 40 s.
"""

from __future__ import annotations

import time

import httpx

from local.connected import ConnectedOrg
from local.stack import LocalStack
from local.template import functions, load_template

PLATFORM_DELAY_SECONDS = 40


def test_a_function_behind_the_api_answers_a_slow_platform_with_503_before_its_timeout(
    stack: LocalStack, api: httpx.Client, org: ConnectedOrg, sandbox: httpx.Client
) -> None:
    # Given: a platform that takes 40 s to answer any read
    timeout = functions(load_template())["GetReadinessFunction"].timeout
    fault = {"kind": "delay", "method": "GET", "seconds": PLATFORM_DELAY_SECONDS, "count": 10}
    assert sandbox.post("/faults", json=fault).status_code < 400

    # When: the readiness checklist (which reads the ad account on the platform) is asked for
    started = time.monotonic()
    answer = api.get("/platform-ads/readiness", headers=org.headers, timeout=60)
    elapsed = time.monotonic() - started

    # Then: a 503 with the service's error body and when to retry, within the function's Timeout
    assert answer.status_code == 503, answer.text
    assert elapsed < timeout, f"answered after {elapsed:.1f} s; the function has {timeout} s"
    assert int(answer.headers["Retry-After"]) >= 1
    body = answer.json()
    assert body["success"] is False
    assert body["error"]["code"] == "platform_unavailable"
    assert body["error"]["remedy"]
