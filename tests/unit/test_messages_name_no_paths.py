"""The messages and remedies the service answers with speak to a marketer: they name what to do on
the dashboard (the wizard's step, the page, the button), never an API path such as
``DELETE /platform-ads/audiences/{audienceId}/advert``; the paths stay in the docs.

The prediction surface (``shared/predictions``) is exempt: its only reader is a developer's code
calling it with an API key, for whom ``GET /client/models`` is the thing to do.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXEMPT = ("shared/predictions/",)
# An HTTP method before a path, a route of the service, or a path parameter.
API_PATH = re.compile(
    r"\b(GET|POST|PUT|PATCH|DELETE)\s+/"
    r"|/(platform-ads|payments|dashboard|client|site-events)(/|\b)"
    r"|\{[a-z][A-Za-z]*Id\}"
)
# Where a message or remedy is given: the keyword arguments, and the first argument of an error.
KEYWORDS = {"message", "remedy"}
ERRORS = re.compile(r"(Failed|Found|Forbidden|Conflict|Throttled|Unavailable|Error|Refused|Limited)$")


def _texts(node: ast.AST) -> list[str]:
    """The literal text of ``node``: a string, a concatenation, or an f-string's fixed parts."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        return [
            "".join(v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str))
        ]
    if isinstance(node, ast.BinOp):
        return _texts(node.left) + _texts(node.right)
    return []


def messages(path: Path) -> list[tuple[int, str]]:
    """Every message and remedy given in ``path``, with its line."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if not isinstance(node, ast.Call):
            continue
        for keyword in node.keywords:
            if keyword.arg in KEYWORDS:
                found += [(keyword.value.lineno, text) for text in _texts(keyword.value)]
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if ERRORS.search(name) and node.args:
            found += [(node.args[0].lineno, text) for text in _texts(node.args[0])]
    return found


def test_no_message_or_remedy_names_an_api_path() -> None:
    # Given every module of the service's library and its handlers
    modules = [
        path
        for root in ("shared", "functions")
        for path in sorted((ROOT / root).rglob("*.py"))
        if not str(path.relative_to(ROOT)).startswith(EXEMPT)
    ]
    assert len(modules) > 50
    # When their messages and remedies are read
    named = [
        f"{path.relative_to(ROOT)}:{line}: {text}"
        for path in modules
        for line, text in messages(path)
        if API_PATH.search(text)
    ]
    # Then none names an API path
    assert named == []


def test_the_audit_finds_a_path_in_a_remedy(tmp_path: Path) -> None:
    # Given a module whose error names a route and whose remedy names another
    module = tmp_path / "module.py"
    module.write_text(
        "raise PreconditionFailed('Refused by GET /platform-ads/status.',\n"
        "    remedy='Delete it first (DELETE /platform-ads/audiences/{audienceId}/advert).')\n"
        "raise NotFound(f'Audience {audience_id} was not found.', remedy='List the audiences.')\n"
    )
    # When the audit reads it
    named = [text for _, text in messages(module) if API_PATH.search(text)]
    # Then both are found, and the message in words is not
    assert named == [
        "Delete it first (DELETE /platform-ads/audiences/{audienceId}/advert).",
        "Refused by GET /platform-ads/status.",
    ]
