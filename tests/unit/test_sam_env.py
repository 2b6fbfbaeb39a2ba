"""``.local/sam-env.json`` gives every function, under ``sam local invoke``, every variable its code
reads that the local stack sets (issue 24, item 7).

SAM CLI sets a function's variables from the template and lets the ``--env-vars`` file override only
those the function declares; a variable the code reads but the template does not declare keeps its
default (the real platform's Graph URL, AWS itself). So the check runs SAM CLI's own code (from
``.venv-sam``, which ``make test`` installs) over ``template.yaml`` and the file ``make dev`` writes,
and compares what each function would get with what the local stack sets.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from local.sam_env import sam_env
from local.template import ROOT, TEMPLATE_PATH, functions, load_template
from tests.unit.settings_read import VARIABLES, read_by_function

SAM_PYTHON = ROOT / ".venv-sam" / "bin" / "python"
FUNCTIONS = functions(load_template())
# What the local stack sets beyond the template's own variables (local/stack.py; the integration
# test tests/integration/test_local_stack.py holds the running stack to this list).
LOCAL_ONLY_VARIABLES = frozenset(
    {"AWS_ENDPOINT_URL", "PLATFORM_GRAPH_URL", "PLATFORM_DIALOG_URL", "JWKS_URL", "PAYMENTS_API_URL"}
)
# A distinct value for each variable the local stack sets.
LOCAL_VALUES = {
    variable: f"local-{variable.lower()}"
    for variable in {name for spec in FUNCTIONS.values() for name in spec.environment} | LOCAL_ONLY_VARIABLES
}

# SAM CLI's reading of the template and its resolution of one function's variables
# (samcli.commands.local.lib.local_lambda.LocalLambdaRunner._make_env_vars, without Docker).
RESOLVE = """
import json, sys
from samcli.lib.providers.sam_function_provider import SamFunctionProvider
from samcli.lib.providers.sam_stack_provider import SamLocalStackProvider
from samcli.local.lambdafn.env_vars import EnvironmentVariables

template, env_file = sys.argv[1], sys.argv[2]
overrides = json.load(open(env_file))
stacks, _ = SamLocalStackProvider.get_stacks(template)
resolved = {}
for function in SamFunctionProvider(stacks).get_all():
    variables = (function.environment or {}).get("Variables")
    env = EnvironmentVariables(
        function.name, function.memory, function.timeout, function.handler,
        variables=variables, shell_env_values={}, override_values=overrides.get(function.name, {}),
        aws_creds={"region": "eu-west-1", "key": "local", "secret": "local"},
    )
    resolved[function.name] = env.resolve()
print(json.dumps(resolved))
"""


@pytest.fixture(scope="module")
def under_sam(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, str]]:
    """Each function's environment as ``sam local invoke --env-vars`` would give it."""
    if not SAM_PYTHON.exists():
        pytest.skip("SAM CLI is not installed (.venv-sam: make template-check installs it)")
    env_file = tmp_path_factory.mktemp("sam") / "sam-env.json"
    env_file.write_text(json.dumps(sam_env(FUNCTIONS, LOCAL_VALUES)))
    run = subprocess.run(
        [str(SAM_PYTHON), "-c", RESOLVE, str(TEMPLATE_PATH), str(env_file)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
        env={"SAM_CLI_TELEMETRY": "0", "PATH": "/usr/bin:/bin"},
    )
    resolved: dict[str, dict[str, str]] = json.loads(run.stdout)
    return resolved


@pytest.fixture(scope="module")
def settings_read() -> dict[str, set[str]]:
    return read_by_function(FUNCTIONS)


def test_sam_sees_every_function(under_sam: dict[str, dict[str, str]]) -> None:
    # Given / When: the template as SAM CLI reads it
    # Then: it finds every function the local stack runs
    assert set(under_sam) == set(FUNCTIONS)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_under_sam_local_every_variable_a_function_reads_has_the_local_stacks_value(
    name: str, under_sam: dict[str, dict[str, str]], settings_read: dict[str, set[str]]
) -> None:
    # Given: the variables the function's code reads that the local stack sets for it (its own, as the
    # template declares them, and the local-only ones)
    given = set(FUNCTIONS[name].environment) | LOCAL_ONLY_VARIABLES
    read = {VARIABLES[field] for field in settings_read[name]} & given

    # When: SAM CLI resolves its environment with the env-vars file
    environment = under_sam[name]

    # Then: each one has the local stack's value (not the template's or a default)
    wrong = {
        variable: environment.get(variable)
        for variable in read
        if environment.get(variable) != LOCAL_VALUES[variable]
    }
    assert wrong == {}


def test_every_function_reaches_moto_under_sam_local(under_sam: dict[str, dict[str, str]]) -> None:
    # Given / When: every function's environment under SAM CLI
    # Then: each one's AWS calls go to the local stack's moto
    endpoints = {name: env.get("AWS_ENDPOINT_URL") for name, env in under_sam.items()}
    assert set(endpoints.values()) == {LOCAL_VALUES["AWS_ENDPOINT_URL"]}


def test_a_variable_the_template_does_not_declare_would_not_reach_the_function(tmp_path: Path) -> None:
    # Given: a function's entry naming a variable it does not declare
    entry = sam_env({"PredictFunction": FUNCTIONS["PredictFunction"]}, {"NOT_DECLARED": "x", **LOCAL_VALUES})

    # Then: the file leaves it out (SAM CLI would ignore it: only declared variables are set)
    assert "NOT_DECLARED" not in entry["PredictFunction"]
    assert entry["PredictFunction"]["AWS_ENDPOINT_URL"] == LOCAL_VALUES["AWS_ENDPOINT_URL"]
