"""Print each function's unzipped size (its code plus its layers) from ``.aws-sam/build`` and fail
above Lambda's 250 MB limit."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from cfnlint.decode import cfn_yaml

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / ".aws-sam" / "build"
LIMIT_MB = 250.0


def dir_size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def layer_ids(function: dict[str, Any], globals_layers: list[Any]) -> list[str]:
    # SAM appends a function's own layers to the Globals layers.
    layers = [*globals_layers, *function["Properties"].get("Layers", [])]
    return [layer["Ref"] for layer in layers if isinstance(layer, dict) and "Ref" in layer]


def layer_dir(resources: dict[str, Any], layer: str) -> Path:
    """Where a layer's content is: built into .aws-sam/build, or (prebuilt) at its ContentUri."""
    built = BUILD / layer
    if built.is_dir():
        return built
    return (BUILD / resources[layer]["Properties"]["ContentUri"]).resolve()


def main() -> int:
    template = cfn_yaml.load(str(BUILD / "template.yaml"))
    globals_layers = template.get("Globals", {}).get("Function", {}).get("Layers", [])
    resources = template["Resources"]
    failed = False
    print(f"{'function':<32} {'code MB':>8} {'layers MB':>10} {'total MB':>9}")
    for name, res in sorted(resources.items()):
        if res["Type"] != "AWS::Serverless::Function":
            continue
        code = dir_size(BUILD / name) / 1e6
        layers = sum(dir_size(layer_dir(resources, layer)) for layer in layer_ids(res, globals_layers)) / 1e6
        total = code + layers
        flag = "  OVER LIMIT" if total > LIMIT_MB else ""
        failed |= total > LIMIT_MB
        print(f"{name:<32} {code:>8.2f} {layers:>10.2f} {total:>9.2f}{flag}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
