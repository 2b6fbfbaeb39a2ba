"""The library's import direction, as a specification (CONTRIBUTING.md, "Layout and import direction").

Every module of ``shared`` belongs to one layer. A module imports from its own layer and the layers
below it, never from a layer above:

    entry      api, middleware, idempotency, wiring              what handlers call; wiring builds it all
    services   audiences, activation, connections, predictions,  the behaviour; collaborators come in
               auth, publishing, datasources, targeting, events  as Protocols
    adapters   aws, repositories, platform, ml, dataplane        AWS, the Graph API, the models, the engine
    foundation clock, deadline, errors, settings,                what everything needs
               observability, wire_models, filekinds, countries
    records    shared.records                                    plain data; imports nothing of shared

and four rules sharpen it:

- services never import a repository (or ``shared.aws``): they declare the store they need as a
  Protocol and ``shared.wiring`` hands them the DynamoDB one;
- adapter packages do not import one another: a repository knows nothing of the platform, and so on;
- boto3 is imported only by repositories (and the wiring that builds clients), httpx only by the
  platform client (and the wiring that builds its connection pool), duckdb only by the data plane;
- no two modules import each other, however indirectly: the activation pipeline
  (``shared.activation``) never imports the audience service that starts it, nor the views that show
  its progress (they read the step names from ``shared.activation.steps``).

Every import counts, at module level, inside a function or under ``TYPE_CHECKING``. Handlers sit
on top of all of it and may import any of ``shared``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Layer:
    name: str
    modules: tuple[str, ...]
    # Whether the packages of this layer may import one another.
    siblings_may_import: bool = True


LAYERS: tuple[Layer, ...] = (
    Layer("records", ("shared.records",)),
    Layer(
        "foundation",
        (
            "shared.clock",
            "shared.deadline",
            "shared.errors",
            "shared.settings",
            "shared.observability",
            "shared.wire_models",
            "shared.filekinds",
            "shared.countries",
        ),
    ),
    Layer(
        "adapters",
        (
            "shared.aws",
            "shared.repositories",
            "shared.platform",
            "shared.ml",
            "shared.dataplane",
            "shared.payments.provider",
        ),
        siblings_may_import=False,
    ),
    Layer(
        "services",
        (
            "shared.audiences",
            "shared.activation",
            "shared.connections",
            "shared.predictions",
            "shared.auth",
            "shared.publishing",
            "shared.datasources",
            "shared.targeting",
            "shared.readiness",
            "shared.closure",
            "shared.events",
            "shared.payments",
            "shared.limits",
        ),
    ),
    Layer("entry", ("shared.api", "shared.middleware", "shared.idempotency", "shared.wiring")),
)

# Services receive these as Protocol-typed collaborators; only the wiring imports them.
SERVICES_NEVER_IMPORT: tuple[str, ...] = ("shared.repositories", "shared.aws")

# Third-party libraries that only their own boundary may import.
BOUNDARY_LIBRARIES: dict[str, tuple[str, ...]] = {
    "boto3": ("shared.aws", "shared.repositories", "shared.wiring"),
    "botocore": ("shared.aws", "shared.repositories", "shared.wiring"),
    "httpx": ("shared.platform", "shared.wiring"),
    "duckdb": ("shared.dataplane",),
    "stripe": ("shared.payments.provider",),
}


@dataclass(frozen=True)
class Violation:
    path: str
    line: int
    imported: str | None
    rule: str

    def __str__(self) -> str:
        what = f" imports {self.imported}" if self.imported else ""
        return f"{self.path}:{self.line}{what}: {self.rule}"


def _within(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def _owner(module: str) -> tuple[int, Layer, str] | None:
    """The layer index, layer and top package (``shared.repositories``) that ``module`` belongs to."""
    for index, layer in enumerate(LAYERS):
        for prefix in layer.modules:
            if _within(module, prefix):
                return index, layer, prefix
    return None


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(tree: ast.AST, package: str) -> list[tuple[int, str]]:
    """Every ``(line, imported module)`` in ``tree``, including imports inside functions.

    ``from shared import aws`` imports ``shared.aws``; ``from shared.platform import audiences``
    is attributed to ``shared.platform.audiences``, which belongs where ``shared.platform`` does.
    """
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
            module = (f"{base}.{node.module}" if node.module else base) if node.level else str(node.module)
            if module == "shared" or not node.module:
                found.extend((node.lineno, f"{module}.{alias.name}") for alias in node.names)
            else:
                found.append((node.lineno, module))
    return found


def check_imports(root: Path) -> list[Violation]:
    """Every import against the direction in the ``shared`` package under ``root``."""
    violations: list[Violation] = []
    for path in sorted((root / "shared").rglob("*.py")):
        module = _module_name(path, root)
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        shown = str(path.relative_to(root))
        if module == "shared":
            continue
        owner = _owner(module)
        if owner is None:
            violations.append(Violation(shown, 1, None, f"{module} belongs to no layer: add it to LAYERS"))
            continue
        level, layer, top = owner
        for line, imported in _imports(ast.parse(path.read_text(encoding="utf-8"), shown), package):
            library = imported.split(".")[0]
            if library in BOUNDARY_LIBRARIES and not any(
                _within(module, allowed) for allowed in BOUNDARY_LIBRARIES[library]
            ):
                allowed = ", ".join(BOUNDARY_LIBRARIES[library])
                violations.append(Violation(shown, line, imported, f"only {allowed} may import {library}"))
            if library != "shared" or imported == "shared":
                continue
            target = _owner(imported)
            if target is None:
                violations.append(Violation(shown, line, imported, "the module belongs to no layer"))
                continue
            target_level, target_layer, target_top = target
            if target_level > level:
                violations.append(
                    Violation(shown, line, imported, f"{layer.name} may not import {target_layer.name}")
                )
            elif target_level == level and target_top != top and not layer.siblings_may_import:
                violations.append(
                    Violation(shown, line, imported, f"{top} may not import another of the {layer.name}")
                )
            if layer.name == "services" and any(_within(imported, p) for p in SERVICES_NEVER_IMPORT):
                violations.append(
                    Violation(
                        shown, line, imported, "services take stores as Protocols, wired in shared.wiring"
                    )
                )
    return violations


def _import_graph(root: Path) -> dict[str, set[str]]:
    """Module -> the modules of ``shared`` it imports (anywhere in it), each resolved to a module
    that exists (``from shared.audiences.models import X`` -> ``shared.audiences.models``)."""
    paths = sorted((root / "shared").rglob("*.py"))
    modules = {_module_name(path, root) for path in paths}
    graph: dict[str, set[str]] = {}
    for path in paths:
        module = _module_name(path, root)
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        targets: set[str] = set()
        for _, imported in _imports(ast.parse(path.read_text(encoding="utf-8"), str(path)), package):
            while imported and imported not in modules:
                imported = imported.rpartition(".")[0]
            if imported and imported != module and imported != "shared":
                targets.add(imported)
        graph[module] = targets
    return graph


def import_cycles(root: Path) -> list[list[str]]:
    """The groups of modules under ``root/shared`` that import one another (strongly connected
    components of the import graph with more than one module), each sorted."""
    graph = _import_graph(root)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's algorithm
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component: list[str] = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(cycles)


def test_the_library_imports_only_downwards() -> None:
    # Given the library as it is
    # When every import of every module is checked against the layers
    violations = check_imports(ROOT)

    # Then none goes against the direction
    assert [str(v) for v in violations] == []


def test_no_modules_of_the_library_import_one_another() -> None:
    # Given the library as it is
    # When its import graph is searched for modules that reach one another
    cycles = import_cycles(ROOT)

    # Then there are none: each module can be read (and tested) without the ones above it
    assert cycles == []


def test_every_package_of_the_library_has_a_layer() -> None:
    # Given the library's top-level modules and packages
    tops = {
        _module_name(p, ROOT).split(".")[1] for p in (ROOT / "shared").rglob("*.py") if p.stem != "__init__"
    }
    tops |= {p.name for p in (ROOT / "shared").iterdir() if (p / "__init__.py").exists()}

    # When each is looked up in the layers
    unplaced = sorted(top for top in tops if _owner(f"shared.{top}") is None)

    # Then every one has its place
    assert unplaced == []


# The checker itself, on small trees: it must catch what it claims to.


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in {"shared/__init__.py": "", **files}.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path


def test_a_tree_importing_downwards_passes(tmp_path: Path) -> None:
    # Given a repository using a record, a service using a platform call, the wiring using both
    root = _tree(
        tmp_path,
        {
            "shared/records/__init__.py": "",
            "shared/records/models.py": "from dataclasses import dataclass\n",
            "shared/repositories/__init__.py": "",
            "shared/repositories/models.py": "import boto3\nfrom shared.records.models import M\n",
            "shared/audiences/__init__.py": "",
            "shared/audiences/service.py": "from shared.platform import audiences\nfrom . import views\n",
            "shared/audiences/views.py": "from shared.errors import NotFound\n",
            "shared/wiring.py": "from shared import aws\nfrom shared.repositories.models import S\n",
        },
    )

    # When it is checked
    violations = check_imports(root)

    # Then nothing is reported
    assert violations == []


def test_modules_importing_each_other_are_reported(tmp_path: Path) -> None:
    # Given a pipeline that reads a protocol from the service that starts it, and the service the
    # pipeline (the circle issue 20 took out of the audiences package)
    root = _tree(
        tmp_path,
        {
            "shared/audiences/__init__.py": "",
            "shared/audiences/service.py": "from shared.audiences.pipeline import Pipeline\n",
            "shared/audiences/pipeline.py": (
                "def f() -> None:\n    from shared.audiences.service import Source\n"
            ),
            "shared/audiences/views.py": "from shared.audiences.service import Service\n",
        },
    )

    # When the import graph is searched
    cycles = import_cycles(root)

    # Then the two modules that import each other are the one cycle (views only imports)
    assert cycles == [["shared.audiences.pipeline", "shared.audiences.service"]]


@pytest.mark.parametrize(
    ("path", "text", "rule"),
    [
        (
            "shared/repositories/models.py",
            "from shared.predictions.catalog import X",
            "adapters may not import services",
        ),
        ("shared/records/models.py", "from shared.clock import iso", "records may not import foundation"),
        ("shared/auth/api_keys.py", "from shared import wiring", "services may not import entry"),
        (
            "shared/connections/lifecycle.py",
            "def f() -> None:\n    from shared.repositories.envelope import EnvelopeCipher",
            "services take stores as Protocols, wired in shared.wiring",
        ),
        (
            "shared/platform/client.py",
            "from shared.ml.scoring import top_k",
            "shared.platform may not import another",
        ),
        (
            "shared/audiences/uploads.py",
            "import httpx",
            "only shared.platform, shared.wiring may import httpx",
        ),
        ("shared/caching.py", "", "shared.caching belongs to no layer"),
    ],
)
def test_an_import_against_the_direction_is_reported(tmp_path: Path, path: str, text: str, rule: str) -> None:
    # Given a tree with one import against the direction
    root = _tree(tmp_path, {path: f"from __future__ import annotations\n\n{text}\n"})

    # When it is checked
    violations = check_imports(root)

    # Then exactly that import is reported, with the rule it breaks
    assert len(violations) == 1
    assert violations[0].path == path
    assert rule in violations[0].rule
