"""Benchmark: exporting a 100,000-user audience end to end against the platform sandbox.

Starts a ``LocalStack`` (moto server, the template's resources, the platform sandbox and the local API
gateway, all in this process), connects a new organization through the sandbox's OAuth dialog, then:

- ``AudienceService.create`` (from ``shared.wiring.audience_service()``) with 100,000 synthetic users.
  This is the library entry point the create-audience handler calls: 100,000 users are ~15 MB of JSON,
  over API Gateway's 10 MB body limit, so no HTTP request can carry them.
- the same for 20,000 users, once through the library and once through ``POST /platform-ads/audiences``
  (a body that fits the limit), side by side, to show what HTTP, the gateway and the handler add.

Wall time is split into preparing (normalise + hash), the CSV snapshot, the S3 puts (source and
snapshot), the audience record saves and the uploads (the sandbox runs in this process, so its share of
the work is in the upload time). Platform calls are counted from the sandbox's request log. Run
``python -m benchmarks.audience_export``.
"""

from __future__ import annotations

import json
import os
import sys
import time
import warnings
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager, redirect_stdout
from dataclasses import dataclass, field
from typing import Any
from unittest import mock

import httpx

from benchmarks._rows import BenchRow
from local.connected import ConnectedOrg, connected_org
from local.stack import LocalStack
from shared import wiring
from shared.activation import hashing
from shared.activation import pipeline as activation
from shared.audiences.models import AudienceCreated, CreateAudienceRequest
from shared.observability import logger
from tests.audience_reference import generate_corpus

SIZE = 100_000
HTTP_SIZE = 20_000
TARGET_SECONDS = 15.0
API_GATEWAY_BODY_LIMIT = 10 * 1024 * 1024


@dataclass
class Stopwatch:
    """Seconds spent in named calls, collected by wrapping them for the duration of one export."""

    seconds: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))
    calls: Counter[str] = field(default_factory=Counter)

    def timed(self, label: str, action: Callable[..., Any]) -> Callable[..., Any]:
        def run(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return action(*args, **kwargs)
            finally:
                self.seconds[label] += time.perf_counter() - started
                self.calls[label] += 1

        return run

    @contextmanager
    def watching(self) -> Iterator[Stopwatch]:
        """Time the export's stages: module functions it calls and the stores it is given."""
        blobs, audiences = wiring.data_blobs(), wiring.audience_store()
        with ExitStack() as stack:
            # The synchronous create runs the activation pipeline's steps (shared.activation.pipeline);
            # NormaliseAndHash prepares the users in the engine (shared.activation.hashing).
            for owner, name, label in (
                (hashing, "hash_users", "prepare"),
                (activation.ActivationPipeline, "_write_snapshot", "snapshot"),
                (activation.platform, "add_users", "upload"),
                (blobs, "put", "s3_put"),
                (audiences, "save_leased", "record_save"),
            ):
                stack.enter_context(mock.patch.object(owner, name, self.timed(label, getattr(owner, name))))
            yield self


def users(size: int) -> list[dict[str, str | None]]:
    """``size`` synthetic users in the request's shape: the hashing benchmark's messy corpus."""
    return generate_corpus(size, seed=23)


def request_body(size: int, name: str) -> dict[str, Any]:
    return {"name": name, "productId": "sku-bench", "modelId": "purchase", "users": users(size)}


def export_through_library(body: dict[str, Any], org: ConnectedOrg) -> tuple[float, float, Stopwatch]:
    """(seconds validating the request, seconds in ``create``, the stage timings) for one export."""
    started = time.perf_counter()
    request = CreateAudienceRequest.model_validate(body)
    validated = time.perf_counter()
    stopwatch = Stopwatch()
    with stopwatch.watching():
        created = wiring.audience_service().create(org.org_id, request)
    finished = time.perf_counter()
    _check(created, body)
    return validated - started, finished - validated, stopwatch


def export_through_http(body: bytes, org: ConnectedOrg, api: httpx.Client) -> float:
    started = time.perf_counter()
    response = api.post(
        "/platform-ads/audiences",
        content=body,
        headers={**org.headers, "Content-Type": "application/json"},
    )
    elapsed = time.perf_counter() - started
    if response.status_code != 201:
        raise RuntimeError(f"create audience over HTTP answered {response.status_code}")
    _check(AudienceCreated.model_validate(response.json()), json.loads(body))
    return elapsed


def _check(created: AudienceCreated, body: dict[str, Any]) -> None:
    if created.status != "active" or created.user_count == 0:
        raise RuntimeError(f"export of {len(body['users'])} users ended {created.status}")


def platform_calls(admin: httpx.Client) -> Counter[str]:
    """Calls in the sandbox's request log since it was last cleared, by method and path shape."""
    entries = admin.get("/requests").json()["requests"]
    return Counter(f"{e['method']} {_path_shape(e['path'])}" for e in entries)


def _path_shape(path: str) -> str:
    return "/".join("{id}" if part.isdigit() or part.startswith("act_") else part for part in path.split("/"))


def run(size: int = SIZE, http_size: int = HTTP_SIZE, stack: LocalStack | None = None) -> list[BenchRow]:
    """Export ``size`` users through the library, and ``http_size`` users through both entry points.

    Starts its own ``LocalStack`` (and restores the environment afterwards) unless given a running one.
    """
    saved_environment = dict(os.environ)
    saved_level = logger.log_level
    # The functions' info logs and metrics go to stdout, where the results are printed: keep it clean.
    logger.setLevel("WARNING")
    try:
        with ExitStack() as context:
            context.enter_context(redirect_stdout(sys.stderr))
            context.enter_context(warnings.catch_warnings(action="ignore", category=UserWarning))
            if stack is None:
                stack = context.enter_context(LocalStack())
            return _measure(stack, size, http_size)
    finally:
        logger.setLevel(saved_level)
        if os.environ != saved_environment:
            os.environ.clear()
            os.environ.update(saved_environment)
            wiring.reset()


def _measure(stack: LocalStack, size: int, http_size: int) -> list[BenchRow]:
    with (
        httpx.Client(base_url=stack.api_url, timeout=300) as api,
        httpx.Client(base_url=f"{stack.sandbox.url}/_admin", timeout=30) as admin,
    ):
        org = connected_org(stack, api)
        body = request_body(size, "Benchmark: library")
        body_bytes = len(json.dumps(body).encode())
        admin.delete("/requests")
        validate_s, create_s, stages = export_through_library(body, org)
        calls = platform_calls(admin)

        small = request_body(http_size, "Benchmark: HTTP")
        small_bytes = json.dumps(small).encode()
        _, small_library_s, _ = export_through_library(small, org)
        small_http_s = export_through_http(small_bytes, org, api)
    return _results(
        size,
        body_bytes,
        validate_s,
        create_s,
        stages,
        calls,
        http_size,
        small_bytes,
        small_library_s,
        small_http_s,
    )


def _results(
    size: int,
    body_bytes: int,
    validate_s: float,
    create_s: float,
    stages: Stopwatch,
    calls: Counter[str],
    http_size: int,
    small_body: bytes,
    small_library_s: float,
    small_http_s: float,
) -> list[BenchRow]:
    split = {
        label: stages.seconds[label] for label in ("prepare", "snapshot", "s3_put", "record_save", "upload")
    }
    split["other"] = create_s - sum(split.values())
    split_notes = ", ".join(
        f"{label} {seconds:.2f}s" + (f" ({stages.calls[label]} calls)" if stages.calls[label] > 1 else "")
        for label, seconds in split.items()
    )
    over_limit = "over" if body_bytes > API_GATEWAY_BODY_LIMIT else "within"
    return [
        BenchRow(
            name="audience_export.library",
            value=round(create_s, 2),
            unit="s",
            baseline=None,
            ratio=None,
            target=TARGET_SECONDS,
            passed=create_s <= TARGET_SECONDS,
            notes=(
                f"AudienceService.create, {size} synthetic users against LocalStack + platform sandbox, "
                f"wall time: {split_notes}; request validation before it {validate_s:.2f}s (not included); "
                f"the users are {body_bytes / 1e6:.1f} MB of JSON, {over_limit} API Gateway's 10 MB body "
                "limit, hence the library entry point"
            ),
        ),
        BenchRow(
            name="audience_export.platform_calls",
            value=sum(calls.values()),
            unit="calls",
            baseline=None,
            ratio=None,
            target=None,
            passed=None,
            notes=f"sandbox request log during the {size}-user export: "
            + ", ".join(f"{n} x {call}" for call, n in sorted(calls.items())),
        ),
        BenchRow(
            name="audience_export.http",
            value=round(small_http_s, 2),
            unit="s",
            baseline=round(small_library_s, 2),
            ratio=round(small_http_s / small_library_s, 2),
            target=None,
            passed=None,
            notes=(
                f"POST /platform-ads/audiences with {http_size} users ({len(small_body) / 1e6:.1f} MB body) "
                f"through the local gateway, against the library call with the same users just before "
                f"(baseline); HTTP + gateway + handler add {small_http_s - small_library_s:.2f}s"
            ),
        ),
    ]


if __name__ == "__main__":
    for result in run():
        print(json.dumps(result))
