"""The committed openapi.json is what the code generates (run `make openapi` after changing routes)."""

from __future__ import annotations

from scripts.openapi import OPENAPI_FILE, generate, render


def test_committed_openapi_matches_the_code() -> None:
    assert OPENAPI_FILE.read_text() == render(generate()), "openapi.json is stale: run `make openapi`"


def test_every_route_declares_its_security_scheme() -> None:
    schema = generate()
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            assert operation.get("security"), f"{method.upper()} {path} has no security requirement"


def test_errors_are_documented_as_the_service_sends_them() -> None:
    # Validation errors are 400 with the service's error body, never Powertools' default 422.
    schema = generate()
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            assert "422" not in operation["responses"], f"{method.upper()} {path}"
            assert operation["responses"]["400"]["content"]["application/json"]["schema"] == {
                "$ref": "#/components/schemas/ErrorBody"
            }
