"""The committed openapi.json is what the code generates (run `make openapi` after changing routes)."""

from __future__ import annotations

from scripts.openapi import OPENAPI_FILE, generate, render

ERROR_BODY = {"$ref": "#/components/schemas/ErrorBody"}


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
            for status, response in operation["responses"].items():
                if status.startswith(("4", "5")):
                    assert response["content"]["application/json"]["schema"] == ERROR_BODY, (method, path)
            assert "400" in operation["responses"], f"{method.upper()} {path}"


def test_a_route_with_an_idempotency_key_documents_its_conflicts() -> None:
    # Given the routes that take an Idempotency-Key (the fuzzer met an undocumented 422 on them)
    schema = generate()
    keyed = {
        (method, path)
        for path, operations in schema["paths"].items()
        for method, operation in operations.items()
        if any(p["name"].lower() == "idempotency-key" for p in operation.get("parameters", []))
    }
    assert ("post", "/platform-ads/audiences") in keyed
    for method, path in keyed:
        # Then a key still in use (409) and a key reused with another body (422) are documented
        assert {"409", "422"} <= set(schema["paths"][path][method]["responses"]), (method, path)


def test_dashboard_routes_document_403() -> None:
    # A valid JWT of a user in no organization is refused with 403 (shared.middleware.require_user)
    schema = generate()
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            if operation["security"] == [{"bearerJwt": []}]:
                assert "403" in operation["responses"], f"{method.upper()} {path}"
