"""Every function ships the third-party code it imports: a function whose handler, or a collaborator
it builds through the wiring, imports numpy has the numpy (or ML) layer. The local stack runs every
function with the whole virtual environment, so only this check stands between a missing layer and
a ModuleNotFoundError on AWS."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from typing import Any

from local.template import ROOT, load_template, resources_of_type

TEMPLATE = load_template()
WIRING = ROOT / "shared" / "wiring.py"
NUMPY_LAYERS = {"NumpyLayer", "MlLayer"}

# Imports each module with numpy and scikit-learn made unimportable, each time with a fresh
# ``shared``/``functions`` package, and prints which modules failed.
_PROBE = """
import importlib, json, sys
sys.modules["numpy"] = None
sys.modules["sklearn"] = None
failed = []
for name in json.loads(sys.argv[1]):
    for loaded in [m for m in sys.modules if m.split(".")[0] in ("shared", "functions")]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
    except ImportError:
        failed.append(name)
print(json.dumps(failed))
"""


def _imports(body: list[ast.stmt] | ast.AST) -> set[str]:
    nodes = body if isinstance(body, list) else [body]
    return {
        node.module
        for tree in nodes
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("shared")
    }


def _wiring_modules() -> dict[str, set[str]]:
    """Per wiring factory, the ``shared`` modules it imports, its own and those of the factories it
    calls (the wiring imports services inside its factories, when they are first built)."""
    tree = ast.parse(WIRING.read_text(encoding="utf-8"))
    factories = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    calls = {
        name: {
            node.func.id
            for node in ast.walk(factory)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in factories
        }
        for name, factory in factories.items()
    }
    modules: dict[str, set[str]] = {}
    for name in factories:
        seen, todo = {name}, [name]
        while todo:
            for callee in calls[todo.pop()] - seen:
                seen.add(callee)
                todo.append(callee)
        modules[name] = set().union(*(_imports(factories[f]) for f in seen))
    return modules


def _function_modules() -> dict[str, tuple[set[str], set[str]]]:
    """Per function: the modules its handler and its wiring factories import, and its layers."""
    factories = _wiring_modules()
    found: dict[str, tuple[set[str], set[str]]] = {}
    for logical_id, resource in resources_of_type(TEMPLATE, "AWS::Serverless::Function").items():
        props: dict[str, Any] = resource["Properties"]
        handler = ROOT / props["CodeUri"] / "handler.py"
        tree = ast.parse(handler.read_text(encoding="utf-8"))
        used = {
            node.attr
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "wiring"
        }
        modules = _imports(tree) | set().union(*(factories.get(name, set()) for name in used))
        layers = {
            layer["Ref"] for layer in props.get("Layers", []) if isinstance(layer, dict) and "Ref" in layer
        }
        found[logical_id] = (modules, layers)
    return found


def _modules_needing_numpy(modules: set[str]) -> set[str]:
    probe = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(sorted(modules))],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return set(json.loads(probe.stdout.strip().splitlines()[-1]))


def test_every_function_that_imports_numpy_ships_a_numpy_layer() -> None:
    # Given each function's imports, through its handler and the wiring factories it calls
    per_function = _function_modules()
    needing = _modules_needing_numpy(set().union(*(modules for modules, _ in per_function.values())))

    # When the functions that reach numpy are compared with their layers
    missing = sorted(
        f"{name}: {sorted(modules & needing)[0]}"
        for name, (modules, layers) in per_function.items()
        if modules & needing and not layers & NUMPY_LAYERS
    )

    # Then none lacks the layer
    assert missing == []


def test_the_probe_finds_a_module_that_imports_numpy() -> None:
    assert _modules_needing_numpy({"shared.datasources.coverage", "shared.errors"}) == {
        "shared.datasources.coverage"
    }


def test_the_data_source_functions_reach_the_coverage() -> None:
    per_function = _function_modules()
    assert "shared.datasources.service" in per_function["SyncDataSourceFunction"][0]


# The functions that publish nothing build publishing without the hosted checkout, whose catalog reader
# imports numpy (shared.wiring.publishing_without_checkout): their first request stays without numpy.
WITHOUT_NUMPY = {"AdsManagerLinkFunction", "DeleteAdvertFunction"}


def test_the_functions_that_never_link_a_checkout_neither_import_numpy_nor_carry_its_layer() -> None:
    # Given each function's imports and layers
    per_function = _function_modules()
    needing = _modules_needing_numpy(set().union(*(per_function[name][0] for name in WITHOUT_NUMPY)))

    # When the Ads Manager link's and Delete advert's are looked at
    reaching = {name for name in WITHOUT_NUMPY if per_function[name][0] & needing}
    carrying = {name for name in WITHOUT_NUMPY if per_function[name][1] & NUMPY_LAYERS}

    # Then neither reaches numpy, and neither ships a numpy layer it does not use
    assert (reaching, carrying) == (set(), set())


# The functions that run the columnar engine (shared/dataplane/; it is imported where it is used, so
# the import probe above does not see it).
ENGINE_FUNCTIONS = {"DataSourceSyncJobFunction", "CheckoutPageFunction", "StartCheckoutFunction"}


def test_the_functions_that_run_the_engine_ship_its_layer() -> None:
    per_function = _function_modules()
    assert {name for name in ENGINE_FUNCTIONS if "DataplaneLayer" not in per_function[name][1]} == set()


# The payment provider's SDK is imported by shared/payments/provider.py when a client is built or a
# delivery verified (not when the module is imported, so a probe cannot see it): a function needs the
# payments layer exactly when a wiring factory it uses builds the provider or the webhook's verifier.
PROVIDER_FACTORIES = ("_payments_provider_for", "payments_webhook")


def _factories_calling(target: str) -> set[str]:
    """The wiring factories that call ``target``, directly or through other factories."""
    tree = ast.parse(WIRING.read_text(encoding="utf-8"))
    factories = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    calls = {
        name: {
            node.func.id
            for node in ast.walk(factory)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in factories
        }
        for name, factory in factories.items()
    }
    reaching = {target}
    while True:
        more = {name for name, callees in calls.items() if callees & reaching} - reaching
        if not more:
            return reaching
        reaching |= more


def _factories_used(props: dict[str, Any]) -> set[str]:
    handler = ROOT / props["CodeUri"] / "handler.py"
    tree = ast.parse(handler.read_text(encoding="utf-8"))
    return {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "wiring"
    }


def test_exactly_the_functions_that_build_the_payment_provider_carry_its_sdk() -> None:
    # Given the factories that build the provider's client
    building = set().union(*(_factories_calling(factory) for factory in PROVIDER_FACTORIES))
    assert "payments_connection_service" in building

    # When each function's factories and layers are compared
    wrong = []
    for name, resource in resources_of_type(TEMPLATE, "AWS::Serverless::Function").items():
        props: dict[str, Any] = resource["Properties"]
        layers = {layer["Ref"] for layer in props.get("Layers", []) if isinstance(layer, dict)}
        builds = bool(_factories_used(props) & building)
        if builds != ("PaymentsLayer" in layers):
            wrong.append(f"{name}: builds the provider {builds}, has the layer {not builds}")

    # Then the layer goes with the provider, and nowhere else (it is 30 MB)
    assert wrong == []
