"""Integration fixtures: the local stack, seeded once per session."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from local.connected import ConnectedOrg, connected_org
from local.seed import DemoCredentials, seed_demo
from local.stack import LocalStack
from tests.integration.payments_shop import PaymentsShop, shop_taking_payments


@pytest.fixture(scope="session")
def stack(local_stack: LocalStack) -> LocalStack:
    return local_stack


@pytest.fixture(autouse=True)
def no_call_denied(request: pytest.FixtureRequest) -> Iterator[None]:
    """Every test on the local stack also proves the functions' permissions: an AWS call a function's
    role refuses fails the test that made it, even if the function handled the refusal (a test that
    means to be refused says so with ``@pytest.mark.denies_calls``)."""
    if "stack" not in request.fixturenames or request.node.get_closest_marker("denies_calls"):
        yield
        return
    stack: LocalStack = request.getfixturevalue("stack")
    stack.clear_denied_calls()
    yield
    denied = stack.denied_calls()
    assert not denied, f"AWS calls refused by the functions' roles: {denied}"


@pytest.fixture(scope="session")
def demo(stack: LocalStack) -> DemoCredentials:
    return seed_demo(stack, n_users=600)


@pytest.fixture
def api(stack: LocalStack) -> Iterator[httpx.Client]:
    """An HTTP client on the local gateway."""
    with httpx.Client(base_url=stack.api_url, timeout=30) as client:
        yield client


@pytest.fixture
def org(stack: LocalStack, api: httpx.Client) -> ConnectedOrg:
    """A fresh organization with a signed-in user and a connected ad account."""
    return connected_org(stack, api)


@pytest.fixture
def sandbox(stack: LocalStack) -> Iterator[httpx.Client]:
    """The platform sandbox's admin API; faults and the scenario are reset afterwards."""
    with httpx.Client(base_url=f"{stack.sandbox.url}/_admin") as admin:
        yield admin
        admin.delete("/faults")
        admin.post("/scenario", json={"name": "default"})


@pytest.fixture
def payments(stack: LocalStack) -> Iterator[httpx.Client]:
    """The payments sandbox's admin API; its faults are cleared afterwards (never reset: the stack's
    webhook endpoint lives there)."""
    with httpx.Client(base_url=f"{stack.payments.url}/_admin", timeout=30) as admin:
        yield admin
        admin.delete("/faults")


@pytest.fixture(scope="module")
def shop(stack: LocalStack) -> PaymentsShop:
    """A shop taking card payments (its products synced), one per test module."""
    return shop_taking_payments(stack)
