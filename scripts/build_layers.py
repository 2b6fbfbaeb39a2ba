"""Build the dependency layers for the Lambda target (arm64, Python 3.12) without Docker.

pip downloads the manylinux aarch64 wheels (``--platform``/``--python-version``/``--only-binary``)
into ``layers/<name>/python``; the service library is copied into ``layers/shared/python/shared``.
A layer is rebuilt only when its requirements change.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ROOT / "layers"
PLATFORMS = ["manylinux2014_aarch64", "manylinux_2_28_aarch64"]
# The Lambda Python runtime ships these; packaging them again only adds cold-start bytes.
PROVIDED_BY_RUNTIME = ["boto3", "botocore", "s3transfer", "jmespath", "dateutil", "urllib3", "six.py"]


def build_dependency_layer(layer: Path) -> None:
    requirements = layer / "requirements.txt"
    target = layer / "python"
    stamp = layer / ".built"
    digest = hashlib.sha256(requirements.read_bytes()).hexdigest()
    if stamp.exists() and stamp.read_text() == digest and target.is_dir():
        print(f"{layer.name}: up to date")
        return
    shutil.rmtree(target, ignore_errors=True)
    command = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    command += [arg for p in PLATFORMS for arg in ("--platform", p)]
    command += ["--implementation", "cp", "--python-version", "3.12", "--only-binary=:all:"]
    command += ["--target", str(target), "-r", str(requirements)]
    print(f"{layer.name}: installing for arm64 / Python 3.12")
    subprocess.run(command, check=True)
    for name in PROVIDED_BY_RUNTIME:
        for path in target.glob(f"{name}*"):
            shutil.rmtree(path) if path.is_dir() else path.unlink()
    # Bytecode caches and the packages' own test suites are never imported at run time
    # (scipy's and scikit-learn's tests alone are ~33 MB of the 250 MB budget).
    for junk in [*target.rglob("__pycache__"), *target.rglob("tests")]:
        if junk.is_dir():
            shutil.rmtree(junk, ignore_errors=True)
    stamp.write_text(digest)


def build_shared_layer() -> None:
    target = LAYERS / "shared" / "python" / "shared"
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(ROOT / "shared", target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    print("shared: copied the service library")


def main() -> int:
    for layer in sorted(p for p in LAYERS.iterdir() if (p / "requirements.txt").is_file()):
        build_dependency_layer(layer)
    build_shared_layer()
    return 0


if __name__ == "__main__":
    sys.exit(main())
