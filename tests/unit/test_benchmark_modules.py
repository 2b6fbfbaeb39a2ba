"""Every benchmark module imports on its own, first, in a fresh interpreter: ``python -m benchmarks``
imports them in one order, a script or a test reading one path's code in another."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODULES = sorted(path.stem for path in (ROOT / "benchmarks").glob("*.py"))


@pytest.mark.parametrize("module", MODULES)
def test_a_benchmark_module_imports_first_without_a_circular_import(module: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", f"import benchmarks.{module}"], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]
