"""The Lambda layer ships ``shared/`` and each function its handler: only what the functions run.

Command-line tools (``tools/``), their dependencies (tqdm) and the repository's dev-only packages
are not in the layer, so a function importing one would fail in AWS. Two checks keep it so: every
handler imported in a fresh interpreter loads none of them, and no module of the shipped code
names one in an import, even inside a function (imported only when called).
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HANDLERS = sorted(path.parent.name for path in (ROOT / "functions").glob("*/handler.py"))
# Top-level packages of the repository (and tool-only dependencies) that are not shipped.
NOT_SHIPPED = frozenset(
    {
        "tools",
        "tqdm",
        "tests",
        "benchmarks",
        "local",
        "platform_sandbox",
        "payments_sandbox",
        "sandbox_kit",
        "scripts",
        # Test-only: Meta's SDK drives the platform sandbox in tests; schemathesis (and its
        # hypothesis) fuzz the API. (The payment provider's SDK is shipped, in the payments functions'
        # own layer: tests/unit/test_function_layers.py.)
        "facebook_business",
        "schemathesis",
        "hypothesis",
    }
)

_IMPORT_EACH_HANDLER = """
import importlib, json, sys
not_shipped = set(sys.argv[1].split(","))
loaded = {}
for name in sys.argv[2:]:
    importlib.import_module(f"functions.{name}.handler")
    found = sorted(m for m in sys.modules if m.split(".")[0] in not_shipped)
    loaded[name] = found
    not_shipped -= {m.split(".")[0] for m in found}  # blame only the first handler that loads one
print(json.dumps(loaded))
"""


def _imported_packages(path: Path) -> set[str]:
    """The top-level package of every import in ``path``, including imports inside functions."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_no_function_loads_a_command_line_tool_or_a_dev_only_package() -> None:
    # Given every function's handler
    assert "predict" in HANDLERS

    # When each is imported in a fresh interpreter, as Lambda does
    result = subprocess.run(
        [sys.executable, "-c", _IMPORT_EACH_HANDLER, ",".join(sorted(NOT_SHIPPED)), *HANDLERS],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )

    # Then none of them loads a module that is not in the layer
    assert result.returncode == 0, result.stderr
    loaded = json.loads(result.stdout)
    assert set(loaded) == set(HANDLERS)
    assert {name: modules for name, modules in loaded.items() if modules} == {}


def test_the_shipped_code_never_imports_what_is_not_shipped() -> None:
    # Given the modules of the layer and of the functions
    shipped = [*(ROOT / "shared").rglob("*.py"), *(ROOT / "functions").rglob("*.py")]

    # When their imports are read
    offenders = {
        str(path.relative_to(ROOT)): sorted(_imported_packages(path) & NOT_SHIPPED) for path in shipped
    }

    # Then none names a tool, a tool-only dependency or a dev-only package
    assert {path: names for path, names in offenders.items() if names} == {}
