"""Fixtures shared by the whole suite."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

USED_GRANTS = Path(__file__).resolve().parent.parent / ".local" / "iam-used.json"

# Nothing in the test suite may reach real AWS: fake credentials and a region before any import.
os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
os.environ.setdefault("AWS_REGION", "eu-west-1")
os.environ.setdefault("AWS_DEFAULT_REGION", "eu-west-1")
os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "Tests")
os.environ.setdefault("POWERTOOLS_SERVICE_NAME", "tests")


@pytest.fixture(scope="session")
def local_stack() -> Iterator[object]:
    """The whole local stack (moto server, template resources, gateway) for integration tests."""
    from local.stack import LocalStack

    # Platform retries back off in milliseconds here; the policy itself is unit-tested.
    fast_retries = {"PLATFORM_BACKOFF_BASE_SECONDS": "0.01", "PLATFORM_USAGE_PAUSE_SECONDS": "0.05"}
    # The suite's organizations (the session's demo one, the fuzzer's) start far more previews, retrains
    # and activations than a marketer would: each organization's limits are lifted here, and
    # tests/integration/test_fair_shares.py sets them low where it proves them.
    lifted = {
        "ORG_LIMIT_TARGETING_PREVIEWS": "100000",
        "ORG_LIMIT_RETRAINS": "100000",
        "ORG_LIMIT_ACTIVATIONS": "100000",
    }
    with LocalStack(extra_env={**fast_retries, **lifted}) as stack:
        yield stack
        # What the roles allowed, for the grants' review (docs/permissions.md): git-ignored.
        used = sorted(stack.allowed_calls())
        USED_GRANTS.parent.mkdir(parents=True, exist_ok=True)
        USED_GRANTS.write_text(json.dumps(used, indent=0) + "\n")
