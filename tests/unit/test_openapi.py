"""The committed openapi.json is what the code generates (run `make openapi` after changing routes)."""

from __future__ import annotations

import re

from scripts.openapi import OPENAPI_FILE, PUBLIC_ENDPOINTS, PUBLIC_PAGES, ROOT, ROUTE_ERRORS, generate, render

ERROR_BODY = {"$ref": "#/components/schemas/ErrorBody"}
# A 429 is the service's error or API Gateway's throttle of the route ({"message": "Too Many Requests"}).
THROTTLED = {"anyOf": [ERROR_BODY, {"$ref": "#/components/schemas/GatewayMessage"}]}


def test_committed_openapi_matches_the_code() -> None:
    assert OPENAPI_FILE.read_text() == render(generate()), "openapi.json is stale: run `make openapi`"


def test_every_route_declares_its_security_scheme() -> None:
    schema = generate()
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            if (method, path) in PUBLIC_PAGES | PUBLIC_ENDPOINTS:
                # The hosted checkout's pages are for shoppers and the site events endpoint for the
                # shop's pages (a site key can only send): public, and said so explicitly
                assert operation["security"] == [], f"{method.upper()} {path}"
                continue
            assert operation.get("security"), f"{method.upper()} {path} has no security requirement"


def test_errors_are_documented_as_the_service_sends_them() -> None:
    # Validation errors are 400 with the service's error body, never Powertools' default 422.
    schema = generate()
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            if (method, path) in PUBLIC_PAGES:
                # A shopper's page answers every expected failure as a page; only the unexpected is JSON
                for status, response in operation["responses"].items():
                    expected = {"500": "application/json"}.get(status, "text/html")
                    assert set(response["content"]) == {expected}, (method, path, status)
                continue
            for status, response in operation["responses"].items():
                if status.startswith(("4", "5")):
                    assert response["content"]["application/json"]["schema"] in (ERROR_BODY, THROTTLED), (
                        method,
                        path,
                    )
                    # Only a 429 may also be API Gateway's own answer (its route throttle)
                    assert status == "429" or response["content"]["application/json"]["schema"] == ERROR_BODY
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
            if operation.get("security") == [{"bearerJwt": []}]:
                assert "403" in operation["responses"], f"{method.upper()} {path}"


def test_each_route_documents_the_errors_its_service_raises() -> None:
    # Given each route's own errors (its service's Conflict, PreconditionFailed, quota and platform
    # failures), listed beside the generator
    schema = generate()
    for (method, path), errors in ROUTE_ERRORS.items():
        # Then the route exists and documents each of them with the service's error body
        assert method in schema["paths"].get(path, {}), f"no route {method.upper()} {path}"
        responses = schema["paths"][path][method]["responses"]
        for status in errors:
            assert responses[str(status)]["content"]["application/json"]["schema"] in (ERROR_BODY, THROTTLED)
    # And the prediction route documents its spent quota (429) and a model replaced under it (409)
    assert {"409", "429"} <= set(schema["paths"]["/client/predict/{modelName}"]["post"]["responses"])


def test_every_error_status_the_readme_gives_a_route_is_in_openapi_json() -> None:
    # Given the README's endpoint table, which says in words when a route answers 409, 422, 429, ...
    rows = [
        match
        for line in (ROOT / "README.md").read_text().splitlines()
        if (match := re.match(r"\| `(GET|POST|PUT|DELETE|PATCH) (/[^` ?]*)[^`]*` \|(.*)", line))
    ]
    assert len(rows) > 30
    schema = generate()
    for row in rows:
        method, path, text = row.group(1).lower(), row.group(2), row.group(3)
        statuses = set(re.findall(r"(?<![\d.,])([45]\d\d)(?![\d.,%])", text))
        # Then the route is documented, with every one of those statuses
        responses = schema["paths"][path][method]["responses"]
        assert statuses <= set(responses), f"{method.upper()} {path}: {sorted(statuses - set(responses))}"


def test_every_create_links_to_what_can_be_done_with_what_it_made() -> None:
    # Given the document's links (scripts/openapi.py, LINKS)
    import schemathesis

    from scripts.openapi import LINKS

    schema = generate()
    # Then each success of a create (a POST answering 201, or 202 with an id) carries its links
    creates = {
        ("post", "/platform-ads/audiences", "201"),
        ("post", "/platform-ads/activations", "202"),
        ("post", "/dashboard/api-keys", "201"),
        ("post", "/platform-ads/events/site/key", "200"),
        ("post", "/platform-ads/uploads", "201"),
        ("post", "/platform-ads/data-source/uploads", "201"),
    }
    for method, path, status in creates | set(LINKS):
        assert schema["paths"][path][method]["responses"][status]["links"], (method, path, status)
    # And an audience's create leads to its reads, its retry with the same Idempotency-Key and its deletion
    audience = schema["paths"]["/platform-ads/audiences"]["post"]["responses"]["201"]["links"]
    assert {"GetActivation", "RetryCreate", "DeleteAudience", "Refresh", "PublishAdvert"} <= set(audience)
    assert audience["RetryCreate"]["parameters"] == {
        "header.idempotency-key": "$request.header.idempotency-key"
    }
    # And every link names an operation and parameters that exist (schemathesis refuses the state
    # machine otherwise)
    assert schemathesis.openapi.from_dict(schema).as_state_machine()
