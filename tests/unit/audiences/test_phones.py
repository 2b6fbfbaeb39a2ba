"""libphonenumber's port is loaded by the code that reads phones, when it first reads one, and by no
other: the predict function's cold start never pays for it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def _loaded_after(script: str) -> bool:
    probe = f"import sys\n{script}\nprint('phonenumbers' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return result.stdout.strip().splitlines()[-1] == "True"


def test_the_predict_function_does_not_load_the_phone_library() -> None:
    # Given a fresh interpreter
    # When it imports the predict function's handler and the identifiers module
    loaded = _loaded_after("import functions.predict.handler\nimport shared.audiences.identifiers")

    # Then the phone library is not loaded
    assert not loaded


def test_reading_a_phone_loads_it() -> None:
    # Given / When a phone number is read
    loaded = _loaded_after(
        "from shared.audiences.identifiers import normalise_phone\nnormalise_phone('07700 900123', 'gb')"
    )

    # Then the library was loaded for it
    assert loaded
