"""Rooms of their own (issue 22, item 6): the payments sandbox is a top-level package beside the
platform sandbox, the service's payments code is ``shared/payments/``, and publishing only asks it
for the hosted checkout's address, through a Protocol (it imports nothing of it)."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from shared.publishing import checkout

ROOT = Path(__file__).resolve().parents[3]


def imports_of(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def test_the_payments_sandbox_is_a_top_level_package_that_runs_alone() -> None:
    assert (ROOT / "payments_sandbox" / "__init__.py").is_file()
    assert (ROOT / "payments_sandbox" / "__main__.py").is_file()
    assert (ROOT / "platform_sandbox" / "__init__.py").is_file()


def test_publishing_imports_nothing_of_the_payments_package() -> None:
    named = {
        name
        for path in (ROOT / "shared" / "publishing").glob("*.py")
        for name in imports_of(path)
        if name.startswith(("shared.payments", "payments_sandbox", "stripe"))
    }
    assert named == set()


def test_publishing_asks_the_payments_package_only_whether_and_where_the_checkout_is() -> None:
    # The collaborator publishing holds: whether the hosted checkout is available, whether it can
    # sell a product (an advert never links to a page saying "not sold here"), and its address
    protocols = [
        cls
        for _, cls in inspect.getmembers(checkout, inspect.isclass)
        if cls.__module__ == checkout.__name__ and getattr(cls, "_is_protocol", False)
    ]
    asked = {
        name
        for cls in protocols
        for name, _ in inspect.getmembers(cls, inspect.isfunction)
        if not name.startswith("_")
    }
    assert asked == {"available", "cannot_sell", "url"}
