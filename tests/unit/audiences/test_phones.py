"""libphonenumber's port is loaded by the code that reads phones, when it first reads one, and by no
other: the predict function's cold start never pays for it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

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


# --- the plans as the engine reads them (shared.activation.hashing) ---------------------------------


def _last_group_widths(pattern: str) -> list[int]:
    """The least width of the pattern's last capturing group (the stdlib's own parser of patterns)."""
    import re._parser as parser  # the parser re compiles with: what the library's patterns mean

    tree = parser.parse(pattern)
    last = tree.state.groups - 1
    found: list[int] = []

    def walk(items: Any) -> None:
        for op, value in items:
            if op is parser.SUBPATTERN:
                group, _, _, sub = value
                if group == last:
                    found.append(sub.getwidth()[0])
                walk(sub)
            elif op is parser.BRANCH:
                for branch in value[1]:
                    walk(branch)
            elif op in (parser.MAX_REPEAT, parser.MIN_REPEAT, parser.POSSESSIVE_REPEAT):
                walk(value[2])

    walk(tree)
    return found


def test_a_plan_that_rewrites_its_prefix_captures_at_least_a_digit_when_it_does() -> None:
    # Given every plan whose national prefix is rewritten (the engine tells "the last group took part"
    # from "it captured something")
    from phonenumbers import PhoneMetadata

    from shared.audiences.phone_plans import numbering_plans

    rewriting = {key: plan for key, plan in numbering_plans().items() if plan.transforms}
    assert {"AR", "BR", "JP"} <= set(rewriting)

    # When, then: its last group, wherever it stands, captures at least one digit
    for key, plan in rewriting.items():
        pattern = PhoneMetadata.metadata_for_region(key).national_prefix_for_parsing
        widths = _last_group_widths(pattern)
        assert plan.last_group >= 1, key
        assert widths, key
        assert min(widths) >= 1, key


def test_calling_codes_are_prefix_free_and_none_starts_with_zero() -> None:
    # Given the calling codes (the engine finds a number's code among its first one to three digits)
    from shared.audiences.phones import calling_codes

    codes = [str(code) for code in calling_codes()]

    # When, then: no code starts another, and none starts with 0
    assert not [(a, b) for a in codes for b in codes if a != b and b.startswith(a)]
    assert not [code for code in codes if code.startswith("0")]
    assert calling_codes()[1] == "US"
    assert calling_codes()[800] == "800"


def test_a_plan_s_lengths_are_the_library_s() -> None:
    # Given the United Kingdom's plan
    from shared.audiences.phone_plans import numbering_plans
    from shared.audiences.phones import INVALID, TOO_LONG, TOO_SHORT

    plan = numbering_plans()["GB"]

    # When, then: ten digits are possible, nine too (0800 numbers), eleven too long, three too short,
    # and a number stripped of its 0 keeps seven digits or more only (local numbers are 4 to 6 and 8)
    assert plan.length_reasons[10] is None
    assert plan.length_reasons[9] is None
    assert plan.length_reasons[11] == TOO_LONG
    assert plan.length_reasons[3] == TOO_SHORT
    assert plan.length_reasons[8] == INVALID
    assert 8 not in plan.strip_lengths
    assert 10 in plan.strip_lengths
    assert plan.international_prefix == "^(?:00)"
    assert plan.country_code == 44
