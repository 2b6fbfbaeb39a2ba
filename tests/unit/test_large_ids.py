"""Ids too large for JavaScript numbers travel as text (issue 23, item 4): a browser's JSON.parse rounds
any integer past 2^53, so no id or seed the API answers is a number, and the seeds a client sends
back may be sent as text and are read exactly."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from shared.audiences.models import ActivationRequest, CreateAudienceRequest
from shared.targeting.models import PreviewRequest

OPENAPI = Path(__file__).resolve().parents[2] / "openapi.json"
ID_LIKE = re.compile(r"(?:Id|_id|^id|Ids|Seed|seed)$")
# Request fields that take a seed as a number or a string of digits (checked below).
SEED_INPUTS = {
    ("ActivationRequest", "holdoutSeed"),
    ("CreateAudienceRequest", "holdoutSeed"),
    ("PreviewRequest", "holdoutSeed"),
}
BEYOND_DOUBLES = "9007199254740993"  # 2^53 + 1: JSON.parse reads it as 9007199254740992


def types_of(schema: dict[str, Any]) -> set[str]:
    found = {schema["type"]} if "type" in schema else set()
    for key in ("anyOf", "oneOf", "allOf"):
        for part in schema.get(key, []):
            found |= types_of(part)
    if schema.get("type") == "array":
        found |= {f"array of {t}" for t in types_of(schema.get("items", {}))}
    return found


def test_no_id_or_seed_in_the_api_is_a_number_but_the_seeds_a_request_may_send() -> None:
    # Given the committed OpenAPI document (tests/unit/test_openapi.py holds it to the code)
    schemas = json.loads(OPENAPI.read_text())["components"]["schemas"]

    # When every property named as an id or a seed is looked at
    id_like = {
        (name, prop): types_of(spec)
        for name, schema in schemas.items()
        for prop, spec in schema.get("properties", {}).items()
        if ID_LIKE.search(prop)
    }
    numbers = {"integer", "number", "array of integer", "array of number"}
    numeric = {key for key, types in id_like.items() if types & numbers}

    # Then the only numbers are the request seeds that also take text (and the answers' ids and seeds,
    # the catalog's product ids and the lift report's seed among them, are text)
    assert numeric == SEED_INPUTS
    assert id_like[("ProductMatch", "productId")] == {"string"}
    assert id_like[("LiftReport", "holdoutSeed")] == {"string"}


@pytest.mark.parametrize(
    ("model", "body"),
    [
        (PreviewRequest, {"modelName": "shop-purchase", "productId": "p1", "rule": "top_n", "value": 10}),
        (CreateAudienceRequest, {"name": "Buyers", "users": [{"user_id": "u1", "email": "a@example.com"}]}),
        (ActivationRequest, {"name": "Buyers", "users": [{"user_id": "u1", "email": "a@example.com"}]}),
    ],
)
def test_a_seed_past_two_to_the_fifty_third_sent_as_text_is_read_exactly(
    model: Any, body: dict[str, Any]
) -> None:
    parsed = model.model_validate({**body, "holdoutSeed": BEYOND_DOUBLES})
    assert parsed.holdout_seed == 2**53 + 1
