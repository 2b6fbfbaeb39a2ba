"""``.local/sam-env.json``: the ``--env-vars`` file of ``sam local invoke`` against the running local
stack, for developers who have Docker (README, "SAM local invoke").

SAM CLI gives a function only the variables it declares in ``template.yaml``, overridden by this
file (the function's own entry, by logical id). So each entry holds every variable the function
declares, with the local stack's value: its tables, buckets, key, secret and state machines as moto
has them, moto's endpoint (``AWS_ENDPOINT_URL``), the platform and payments sandboxes and the user
pool's keys. The local-only ones are declared in the template's Globals for this (``SamLocalOnly``:
absent when deployed).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from local.template import ROOT, FunctionSpec

SAM_ENV_FILE = ROOT / ".local" / "sam-env.json"


def sam_env(specs: Mapping[str, FunctionSpec], values: Mapping[str, str]) -> dict[str, dict[str, str]]:
    """Per function (logical id), each variable it declares that the local stack gives a value
    (``values``: the functions' resolved environment with the stack's own settings)."""
    return {
        name: {variable: str(values[variable]) for variable in sorted(spec.environment) if variable in values}
        for name, spec in sorted(specs.items())
    }


def write_sam_env(path: Path, specs: Mapping[str, FunctionSpec], values: Mapping[str, str]) -> None:
    """Write :func:`sam_env` to ``path`` as JSON (git-ignored, like the credentials beside it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(sam_env(specs, values), indent=2) + "\n")
