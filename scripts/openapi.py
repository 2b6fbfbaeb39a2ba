"""OpenAPI 3 for the whole API, generated from the handlers' routes and models.

``python -m scripts.openapi --write`` refreshes the committed ``openapi.json``; the test suite fails
when the committed file drifts from what the code generates.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path
from typing import Any

from aws_lambda_powertools.event_handler.openapi.merge import OpenAPIMerge

from local.template import functions, load_template, routes
from shared.api import API_TITLE, API_VERSION, SECURITY_SCHEMES, ErrorBody

ROOT = Path(__file__).resolve().parent.parent
OPENAPI_FILE = ROOT / "openapi.json"


def generate() -> dict[str, Any]:
    """The merged OpenAPI document of every ``functions/*/handler.py``."""
    merge = OpenAPIMerge(
        title=API_TITLE,
        version=API_VERSION,
        description=(
            "Scores users with a merchant's trained models (API key) and exports predicted buyers "
            "as advertising-platform Custom Audiences (dashboard JWT)."
        ),
        security_schemes=SECURITY_SCHEMES,
        on_conflict="error",
    )
    # Handlers build their resolver with shared.api.create_app(), which OpenAPIMerge.discover's
    # AST scan does not recognise, so the handler of every function with an API route is added.
    template = load_template()
    specs = functions(template)
    for name in sorted({route.function for route in routes(template)}):
        merge.add_file(specs[name].code_dir / "handler.py", resolver_name="app")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a handler that fails to import must fail generation
        schema: dict[str, Any] = json.loads(merge.get_openapi_json_schema())
    return document_errors(schema)


def document_errors(schema: dict[str, Any]) -> dict[str, Any]:
    """Replace Powertools' generic 422 with the error responses the service really sends.

    Validation failures are mapped to 400 with the service's one error body (``shared.api``), so the
    document says that, plus 401 for authenticated routes, 403 for dashboard (JWT) routes, 409 and
    422 for routes that take an Idempotency-Key, 415 for routes that read a JSON body and 404/500
    everywhere.
    """
    schemas = schema.setdefault("components", {}).setdefault("schemas", {})
    error_schema = ErrorBody.model_json_schema(ref_template="#/components/schemas/{model}")
    schemas.update(error_schema.pop("$defs", {}))
    schemas["ErrorBody"] = error_schema
    for name in ("HTTPValidationError", "ValidationError"):
        schemas.pop(name, None)
    body = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}
    for operations in schema.get("paths", {}).values():
        for operation in operations.values():
            responses = operation.setdefault("responses", {})
            responses.pop("422", None)
            responses["400"] = {"description": "Invalid request: the error names the field", "content": body}
            if any(requirement for requirement in operation.get("security", [])):
                responses["401"] = {"description": "Missing or invalid credentials", "content": body}
            if any("bearerJwt" in requirement for requirement in operation.get("security", [])):
                # shared.middleware.require_user: a valid JWT of a user in no organization.
                responses["403"] = {
                    "description": "The signed-in user may not do this (no organization, or not theirs)",
                    "content": body,
                }
            if _takes_idempotency_key(operation):
                # shared.api: Powertools' idempotency errors, found by tests/integration/test_fuzz.py.
                responses["409"] = {
                    "description": "A request with this Idempotency-Key is still being processed",
                    "content": body,
                }
                responses["422"] = {
                    "description": "This Idempotency-Key was already used with a different body",
                    "content": body,
                }
            if "requestBody" in operation:
                responses["415"] = {
                    "description": "The body is not sent as application/json",
                    "content": body,
                }
            responses["404"] = {"description": "Not found", "content": body}
            responses["500"] = {"description": "Unexpected failure", "content": body}
    return schema


def _takes_idempotency_key(operation: dict[str, Any]) -> bool:
    return any(
        parameter.get("in") == "header" and str(parameter.get("name", "")).lower() == "idempotency-key"
        for parameter in operation.get("parameters", [])
    )


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--write", action="store_true", help="write openapi.json")
    args = parser.parse_args()
    text = render(generate())
    if args.write:
        OPENAPI_FILE.write_text(text)
        print(f"wrote {OPENAPI_FILE.relative_to(ROOT)}")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
