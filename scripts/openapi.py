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
from shared.datasources.service import MODEL_NAMES

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
    return document_links(
        document_no_content(
            document_confirmations(
                document_pages(document_webhook(document_errors(document_public_endpoints(schema))))
            )
        )
    )


# What the platform's failures become on a route that calls it (shared/platform/errors.py): a token
# to renew or an account not ready (422), its rate limit after the client's retries (429), or the
# platform failing (502, with its message and trace id for support).
_PLATFORM = {
    422: "The ad account must be reconnected, or is not ready for this (the error says what to do)",
    429: "The platform's rate limit: retry after the time the error gives",
    502: "The platform failed: the error gives its exact message and trace id for support",
}


# The organization's limit of an expensive action (shared/limits/actions.py, README "Limits"): the
# error says what was limited and when another can start; API Gateway's own route throttle answers
# 429 too, with its {"message": "Too Many Requests"}.
def _org_limit(what: str) -> str:
    return (
        f"The organization started its limit of {what} for now (or the route's throttle was reached): "
        "retry after Retry-After"
    )


# The errors of each route beyond the ones every route of its kind has (below): what its service
# raises (shared/errors.py's Conflict 409, PreconditionFailed 422, QuotaExceeded 429, UpstreamError
# 502 and the platform's errors mapped to them). tests/unit/test_openapi.py checks it against the
# README's endpoint table.
ROUTE_ERRORS: dict[tuple[str, str], dict[int, str]] = {
    ("post", "/client/predict/{modelName}"): {
        409: "The model is being replaced by a new version right now: retry in a moment",
        429: "The API key's daily quota is spent (X-Service-Usage-Remaining: 0); it resets at midnight UTC",
    },
    ("post", "/platform-ads/account/closure"): {
        409: "The account's closure has already completed",
        422: "Deleting the platform's audiences needs a connected ad account",
    },
    ("post", "/platform-ads/activations"): {
        **_PLATFORM,
        429: f"{_org_limit('audience activations')}; or: {_PLATFORM[429]}",
    },
    ("post", "/platform-ads/activations/{audienceId}/retry"): {
        409: "Only a failed activation can be retried",
    },
    ("post", "/platform-ads/audiences"): {
        **_PLATFORM,
        429: f"{_org_limit('audience activations')}; or: {_PLATFORM[429]}",
    },
    ("delete", "/platform-ads/audiences/{audienceId}"): {
        409: "The audience has an advert on the platform, or lookalikes made outside the service",
        **_PLATFORM,
    },
    ("get", "/platform-ads/audiences/{audienceId}/ads-manager-link"): {
        422: "The audience is not active yet",
    },
    ("delete", "/platform-ads/audiences/{audienceId}/advert"): _PLATFORM,
    ("post", "/platform-ads/audiences/{audienceId}/advert"): {
        409: "The audience already has an advert, or another request is publishing it",
        **_PLATFORM,
        422: "The audience or the ad account is not ready to advertise (no pixel, Page, payment "
        "method or beneficiary, an app in development mode, a token to renew): the error says what "
        "to do, and nothing is left behind",
        502: "The platform failed, or objects the rollback could not delete are listed on the audience",
    },
    ("get", "/platform-ads/audiences/{audienceId}/lift"): {
        422: "The audience has no holdout, or is not active yet, or too few users to compare",
    },
    ("post", "/platform-ads/audiences/{audienceId}/refresh"): {
        409: "A sync of this audience is already running (the message says when it started, by whom, "
        "and its run id)",
        **_PLATFORM,
        422: "The audience is not active, was made from a list (no segment to score again), or its ad "
        "account is not connected",
    },
    ("post", "/platform-ads/audiences/{audienceId}/sync"): {
        409: "The audience was deleted, or kept being written by other actions, while the schedule "
        "was saved: nothing was changed",
        422: "The audience was not made from a segment, so it has nothing to sync",
    },
    ("post", "/platform-ads/connect/callback"): {
        **_PLATFORM,
        422: "No business-owned ad account can be used (the error says what to do)",
    },
    ("post", "/payments/connect"): {
        409: "A different account (newAccount) was asked for while one is connected: disconnect it first",
    },
    ("post", "/payments/webhook"): {
        409: "Another delivery of this event is being handled: the provider delivers it again",
    },
    ("post", "/platform-ads/data-source/sync"): {
        409: "A sync or training is already under way",
    },
    ("get", "/platform-ads/readiness"): {
        429: _PLATFORM[429],
        502: _PLATFORM[502],
    },
    ("post", "/platform-ads/events/site/key"): {
        422: "No domain is declared yet: the site's pages would all be refused",
    },
    ("post", "/platform-ads/targeting/preview"): {
        422: "No synced data source holds the customers' identifiers",
        429: _org_limit("targeting previews"),
    },
    ("post", "/dashboard/models/retrain"): {
        429: _org_limit("retrains"),
    },
}


# The hosted checkout's pages, for shoppers: no credentials (``security: []``), and every answer but an
# unexpected failure is an HTML page (shared/payments/pages.py), the errors too (a page that says why
# the product cannot be bought here, never an error body).
PUBLIC_PAGES: frozenset[tuple[str, str]] = frozenset(
    {
        ("get", "/checkout/{orgId}/{productId}"),
        ("get", "/checkout/{orgId}/{productId}/paid"),
        ("get", "/checkout/{orgId}/{productId}/cancelled"),
        ("post", "/checkout/{orgId}/{productId}"),
    }
)
# The site events endpoint (issue 21, item 3): the shop's pages call it with a site key in its address
# (which can only send events), no credentials; its answers are JSON, its errors the service's body.
PUBLIC_ENDPOINTS: frozenset[tuple[str, str]] = frozenset(
    {("post", "/site-events"), ("options", "/site-events")}
)
SITE_KEY_PARAMETER = {
    "in": "query",
    "name": "key",
    "required": True,
    "schema": {"type": "string"},
    "description": "The organization's site key (the dashboard's Events page): it can only send events.",
}


# The product page's form (shared/payments/checkout.py reads it; a quantity out of range is asked again).
CHECKOUT_FORM = {
    "required": True,
    "content": {
        "application/x-www-form-urlencoded": {
            "schema": {
                "type": "object",
                "properties": {
                    "quantity": {"type": "string", "pattern": "^[1-9][0-9]?$", "description": "1 to 99"}
                },
                "required": ["quantity"],
            }
        }
    },
}


def document_pages(schema: dict[str, Any]) -> dict[str, Any]:
    """The public pages: no security requirement, the product form's body, HTML answers."""
    for method, path in PUBLIC_PAGES:
        operation = schema["paths"][path][method]
        operation["security"] = []
        operation.get("responses", {}).pop("422", None)
        if method == "post":
            operation["requestBody"] = CHECKOUT_FORM
        if (method, path) == ("get", "/checkout/{orgId}/{productId}"):
            operation["parameters"].append(
                {
                    "in": "query",
                    "name": "quantity",
                    "required": False,
                    "schema": {"type": "string"},
                    "description": "The quantity to show (1-99; anything else shows 1).",
                }
            )
        for response in operation["responses"].values():
            response["content"] = {"text/html": {"schema": {"type": "string"}}}
        operation["responses"]["500"] = {
            "description": "Unexpected failure",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}},
        }
    return schema


def document_public_endpoints(schema: dict[str, Any]) -> dict[str, Any]:
    """The site events endpoint: no security requirement, the site key, the events body (JSON, sent as
    text/plain by the snippet so that a page needs no preflight), and the service's error body."""
    from shared.events.site_events import SiteEventBatch, SiteEventsReceived

    schemas = schema.setdefault("components", {}).setdefault("schemas", {})
    for model in (SiteEventBatch, SiteEventsReceived):
        found = model.model_json_schema(by_alias=True, ref_template="#/components/schemas/{model}")
        schemas.update(found.pop("$defs", {}))
        schemas[model.__name__] = found
    error = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}
    for method, path in PUBLIC_ENDPOINTS:
        operation = schema["paths"][path][method]
        operation["security"] = []
        operation["parameters"] = [SITE_KEY_PARAMETER]
        responses = operation.setdefault("responses", {})
        for status, response in responses.items():
            if status.startswith(("4", "5")):
                response["content"] = error
        if method == "post":
            batch = {"schema": {"$ref": "#/components/schemas/SiteEventBatch"}}
            operation["requestBody"] = {
                "required": True,
                "content": {"text/plain": batch, "application/json": batch},
            }
            responses["200"]["content"] = {
                "application/json": {"schema": {"$ref": "#/components/schemas/SiteEventsReceived"}}
            }
        else:
            responses.pop("200", None)
            responses["204"] = {
                "description": "CORS headers for a page of the organization's declared domains, none else"
            }
    return schema


def document_webhook(schema: dict[str, Any]) -> dict[str, Any]:
    """The provider's webhook delivery: its body is the provider's event (``ProviderEvent``), read raw
    (the signature is over its bytes, whatever the Content-Type, so no 415); the handler has no body
    parameter for Powertools to document."""
    from shared.payments.webhooks import ProviderEvent

    schemas = schema.setdefault("components", {}).setdefault("schemas", {})
    found = ProviderEvent.model_json_schema(by_alias=True, ref_template="#/components/schemas/{model}")
    schemas.update(found.pop("$defs", {}))
    schemas[ProviderEvent.__name__] = found
    schema["paths"]["/payments/webhook"]["post"]["requestBody"] = {
        "required": True,
        "content": {
            "application/json": {"schema": {"$ref": f"#/components/schemas/{ProviderEvent.__name__}"}}
        },
    }
    return schema


def document_errors(schema: dict[str, Any]) -> dict[str, Any]:
    """Replace Powertools' generic 422 with the error responses the service really sends.

    Validation failures are mapped to 400 with the service's one error body (``shared.api``), so the
    document says that, plus 401 for authenticated routes, 403 for dashboard (JWT) routes, 409 and
    422 for routes that take an Idempotency-Key, 415 for routes that read a JSON body, 404/500/503
    everywhere (503 and 429 with their Retry-After), and each route's own errors (``ROUTE_ERRORS``).
    """
    schemas = schema.setdefault("components", {}).setdefault("schemas", {})
    error_schema = ErrorBody.model_json_schema(ref_template="#/components/schemas/{model}")
    schemas.update(error_schema.pop("$defs", {}))
    schemas["ErrorBody"] = error_schema
    for name in ("HTTPValidationError", "ValidationError"):
        schemas.pop(name, None)
    body = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}
    for path, operations in schema.get("paths", {}).items():
        for method, operation in operations.items():
            if (method, path) in PUBLIC_PAGES:
                continue
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
            if "requestBody" in operation and (method, path) not in PUBLIC_ENDPOINTS:
                responses["415"] = {
                    "description": "The body is not sent as application/json",
                    "content": body,
                }
            responses["404"] = {"description": "Not found", "content": body}
            responses["500"] = {"description": "Unexpected failure", "content": body}
            # shared.deadline: every outbound call fits the function's time; what does not is answered.
            responses["503"] = {
                "description": "A dependency (the advertising platform, AWS) did not answer in the time the "
                "request had: retry after Retry-After",
                "content": body,
                "headers": {"Retry-After": RETRY_AFTER},
            }
            for status, description in ROUTE_ERRORS.get((method, path), {}).items():
                known = responses.get(str(status), {}).get("description")
                if known and known != description and description not in known:
                    description = f"{known}; or: {description}"
                responses[str(status)] = {"description": description, "content": body}
            # API Gateway's throttle of the route (template.yaml, RouteSettings) answers before any
            # function runs, with its own body.
            throttled = responses.get("429", {}).get("description")
            responses["429"] = {
                "description": f"{throttled}; or: {GATEWAY_THROTTLED}" if throttled else GATEWAY_THROTTLED,
                "content": {
                    "application/json": {
                        "schema": {
                            "anyOf": [
                                {"$ref": "#/components/schemas/ErrorBody"},
                                {"$ref": "#/components/schemas/GatewayMessage"},
                            ]
                        }
                    }
                },
                "headers": {"Retry-After": RETRY_AFTER},
            }
    schemas["GatewayMessage"] = GATEWAY_MESSAGE
    return schema


GATEWAY_THROTTLED = (
    'API Gateway\'s throttle of the route was reached ({"message": "Too Many Requests"}): retry in a moment'
)
# What API Gateway itself answers (its throttle's 429): no error code, no remedy.
GATEWAY_MESSAGE = {
    "type": "object",
    "title": "GatewayMessage",
    "properties": {"message": {"type": "string"}},
    "required": ["message"],
}


RETRY_AFTER = {
    "description": "Seconds to wait before trying again (when known).",
    "schema": {"type": "integer", "minimum": 1},
}


def _takes_idempotency_key(operation: dict[str, Any]) -> bool:
    return any(
        parameter.get("in") == "header" and str(parameter.get("name", "")).lower() == "idempotency-key"
        for parameter in operation.get("parameters", [])
    )


# --- links: from each create to the reads, retries and deletes of what it made ----------------------
# OpenAPI links let a client (and schemathesis' stateful phase, tests/integration/test_fuzz.py) walk
# create -> read -> retry -> delete with the ids the service gave. They join operations of different
# functions (each handler is its own Lambda, merged by OpenAPIMerge), so they are declared here in one
# table, not on each route; tests/unit/test_openapi.py checks every target exists and every create
# has links.
AUDIENCE_ID = "$response.body#/audienceId"


def _link(method: str, path: str, description: str, **extra: Any) -> dict[str, Any]:
    pointer = path.replace("~", "~0").replace("/", "~1")
    return {"operationRef": f"#/paths/{pointer}/{method}", "description": description, **extra}


def _of_audience(source: str) -> dict[str, dict[str, Any]]:
    """The links from an answer that names an audience (``audienceId``) to what can be done with it."""
    by_id = {"path.audienceId": AUDIENCE_ID}
    audience = "/platform-ads/audiences/{audienceId}"
    return {
        "GetActivation": _link(
            "get", "/platform-ads/activations/{audienceId}", f"The {source}'s progress", parameters=by_id
        ),
        "RetryActivation": _link(
            "post",
            "/platform-ads/activations/{audienceId}/retry",
            "Retry its activation once failed",
            parameters=by_id,
        ),
        "ListAudiences": _link("get", "/platform-ads/audiences", "The list that shows it"),
        "GetSnapshot": _link("get", f"{audience}/snapshot", "Its CSV snapshot", parameters=by_id),
        "GetLift": _link(
            "get", f"{audience}/lift", "Its lift report (segment audiences with a holdout)", parameters=by_id
        ),
        "GetAdsManagerLink": _link(
            "get", f"{audience}/ads-manager-link", "Generate campaign's link", parameters=by_id
        ),
        "Refresh": _link(
            "post", f"{audience}/refresh", "Replace its members, or sync a segment now", parameters=by_id
        ),
        "ConfigureSync": _link(
            "post", f"{audience}/sync", "How a segment audience stays up to date", parameters=by_id
        ),
        "PublishAdvert": _link("post", f"{audience}/advert", "Publish an advert to it", parameters=by_id),
        "DeleteAdvert": _link(
            "delete", f"{audience}/advert", "Remove its advert", parameters={**by_id, "query.confirm": True}
        ),
        "DeleteAudience": _link(
            "delete",
            audience,
            "Delete it, here and on the platform",
            parameters={**by_id, "query.confirm": True},
        ),
    }


# A link whose requestBody is the whole body to send, not fields to merge into a generated one (the
# default of schemathesis' stateful phase): the bodies above take one of users, an uploadId or a
# segment (a sync: an uploadId or files), so an uploadId merged into a body that has users is refused.
_WHOLE_BODY = {"x-schemathesis": {"merge_body": False}}


def _retry(method: str, path: str) -> dict[str, Any]:
    """The same request again with its Idempotency-Key: the answer of the first, nothing made twice."""
    return _link(
        method,
        path,
        "Send the same request again with the same Idempotency-Key (a lost answer): the same result",
        parameters={"header.idempotency-key": "$request.header.idempotency-key"},
        requestBody="$request.body",
        **_WHOLE_BODY,
    )


# The checkout page of checkout-routes' checkoutUrl (``.../checkout/{orgId}/{productId}``).
_CHECKOUT_PAGE = {
    "path.orgId": "$response.body#/checkoutUrl#regex:/checkout/([^/?]+)/",
    "path.productId": "$response.body#/checkoutUrl#regex:/checkout/[^/]+/([^/?]+)",
}
_AUDIENCE_CREATE = {**_of_audience("upload"), "RetryCreate": _retry("post", "/platform-ads/audiences")}
_ACTIVATION = {**_of_audience("activation"), "RetryStart": _retry("post", "/platform-ads/activations")}
_SITE = {
    "GetSite": _link("get", "/platform-ads/events/site", "The site as declared"),
    "IssueSiteKey": _link("post", "/platform-ads/events/site/key", "Issue (or rotate) the site key"),
}
LINKS: dict[tuple[str, str, str], dict[str, dict[str, Any]]] = {
    ("post", "/platform-ads/audiences", "201"): _AUDIENCE_CREATE,
    ("post", "/platform-ads/audiences", "202"): _AUDIENCE_CREATE,
    ("post", "/platform-ads/activations", "202"): _ACTIVATION,
    ("post", "/platform-ads/activations/{audienceId}/retry", "202"): _of_audience("retried activation"),
    ("post", "/dashboard/api-keys", "201"): {
        "ListApiKeys": _link("get", "/dashboard/api-keys", "The keys, this one with its prefix and label"),
        "RevokeApiKey": _link(
            "delete",
            "/dashboard/api-keys/{keyId}",
            "Revoke it",
            parameters={"path.keyId": "$response.body#/keyId"},
        ),
    },
    ("post", "/platform-ads/events/site", "200"): _SITE,
    ("post", "/platform-ads/events/site/key", "200"): {
        **_SITE,
        "RevokeSiteKey": _link("delete", "/platform-ads/events/site/key", "Revoke the site key"),
        "SendSiteEvents": _link(
            "post",
            "/site-events",
            "Send the site's events with it",
            parameters={"query.key": "$response.body#/siteKey"},
        ),
    },
    ("post", "/platform-ads/uploads", "201"): {
        "CreateAudienceFromUpload": _link(
            "post",
            "/platform-ads/audiences",
            "Make an audience of the uploaded CSV",
            requestBody={"name": "Uploaded list", "uploadId": "$response.body#/uploadId"},
            **_WHOLE_BODY,
        ),
    },
    ("post", "/platform-ads/data-source/uploads", "201"): {
        "SyncUpload": _link(
            "post",
            "/platform-ads/data-source/sync",
            "Sync the uploaded files",
            requestBody={"uploadId": "$response.body#/uploadId"},
            **_WHOLE_BODY,
        ),
        "GetDataSource": _link("get", "/platform-ads/data-source", "The data source's versions and syncs"),
    },
    ("post", "/platform-ads/data-source/sync", "202"): {
        "GetDataSource": _link("get", "/platform-ads/data-source", "The sync's progress"),
    },
    ("post", "/dashboard/models/retrain", "202"): {
        "ListModels": _link("get", "/dashboard/models", "The models' training"),
    },
    ("post", "/platform-ads/connect", "200"): {
        "CompleteConnection": _link(
            "post",
            "/platform-ads/connect/callback",
            "Complete it with what the platform's redirect brings back (the state it was given)",
            requestBody={"state": "$response.body#/authorizationUrl#regex:[?&]state=([^&]+)"},
        ),
        "GetStatus": _link("get", "/platform-ads/status", "The connection's status"),
    },
    ("post", "/payments/connect", "200"): {
        "CompleteOnboarding": _link(
            "post",
            "/payments/connect/callback",
            "Complete it when the provider's onboarding returns (the state it was given)",
            requestBody={"state": "$response.body#/onboardingUrl#regex:[?&]state=([^&]+)"},
        ),
        "GetStatus": _link("get", "/payments/status", "The payments account's status"),
    },
    ("post", "/platform-ads/account/closure", "202"): {
        "GetClosure": _link("get", "/platform-ads/account/closure", "The closure's progress"),
    },
    ("get", "/platform-ads/account/closure", "200"): {
        "CloseAccount": _link(
            "post",
            "/platform-ads/account/closure",
            "Close it, typing the organization's name as the page shows it",
            requestBody={"confirmName": "$response.body#/organizationName"},
        ),
    },
    ("get", "/platform-ads/checkout-routes", "200"): {
        "OpenCheckoutPage": _link(
            "get",
            "/checkout/{orgId}/{productId}",
            "The product's hosted checkout page, as a shopper opens it from the advert",
            parameters=_CHECKOUT_PAGE,
        ),
        "StartCheckout": _link(
            "post",
            "/checkout/{orgId}/{productId}",
            "Buy it from that page",
            parameters=_CHECKOUT_PAGE,
        ),
    },
    ("post", "/platform-ads/targeting/preview", "200"): {
        "ActivateSegment": _link(
            "post",
            "/platform-ads/audiences",
            "Activate the previewed segment with its holdout: exactly the users counted",
            requestBody={
                "name": "Previewed segment",
                "segment": "$request.body",
                "holdoutPercent": "$response.body#/holdout/percent",
                "holdoutSeed": "$response.body#/holdout/seed",
            },
            **_WHOLE_BODY,
        ),
    },
    ("get", "/client/models", "200"): {
        "ListTrainingUsers": _link(
            "get",
            "/client/models/{modelName}/users",
            "The first model's training users",
            parameters={"path.modelName": "$response.body#/models/0/name"},
        ),
    },
    ("get", "/client/models/{modelName}/users", "200"): {
        "Predict": _link(
            "post",
            "/client/predict/{modelName}",
            "Score the first training user",
            parameters={"path.modelName": "$request.path.modelName"},
            requestBody={"input": {"user_id": "$response.body#/user_ids/0"}},
        ),
        "NextPage": _link(
            "get",
            "/client/models/{modelName}/users",
            "The next page",
            parameters={
                "path.modelName": "$request.path.modelName",
                "query.cursor": "$response.body#/next_cursor",
            },
        ),
    },
    ("get", "/platform-ads/data-source/products", "200"): {
        "PreviewProduct": _link(
            "post",
            "/platform-ads/targeting/preview",
            "Preview a segment of the first product found, scored by the purchase model the sync trains",
            requestBody={
                "productId": "$response.body#/products/0/productId",
                "modelName": MODEL_NAMES["purchase"],
            },
        ),
        "CheckoutRoutes": _link(
            "get",
            "/platform-ads/checkout-routes",
            "How the first product can be sold",
            parameters={"query.productId": "$response.body#/products/0/productId"},
        ),
    },
}


def document_links(schema: dict[str, Any]) -> dict[str, Any]:
    """Each create's links (``LINKS``) on its success answers."""
    for (method, path, status), links in LINKS.items():
        schema["paths"][path][method]["responses"][status]["links"] = links
    return schema


# A deletion asks for ?confirm=true (it cannot be undone): anything else is refused with 400.
CONFIRMED_DELETIONS = (
    ("delete", "/platform-ads/audiences/{audienceId}"),
    ("delete", "/platform-ads/audiences/{audienceId}/advert"),
)


def document_confirmations(schema: dict[str, Any]) -> dict[str, Any]:
    """``confirm`` is a boolean query parameter to Powertools, and the service refuses all but true:
    the document says so (required, true), so that a generated deletion is one the service carries out."""
    for method, path in CONFIRMED_DELETIONS:
        for parameter in schema["paths"][path][method]["parameters"]:
            if parameter["name"] == "confirm":
                parameter["required"] = True
                parameter["schema"] = {**parameter["schema"], "const": True}
                parameter["schema"].pop("default", None)
    return schema


def document_no_content(schema: dict[str, Any]) -> dict[str, Any]:
    """A 204 answer has no body (RFC 9110, 15.3.5), so no media type: Powertools documents the
    handler's ``Response`` return as ``application/json`` null, which a client would then check the
    empty answer's Content-Type against (the stateful fuzzing did, on a deleted audience)."""
    for operations in schema["paths"].values():
        for operation in operations.values():
            if isinstance(operation, dict) and "204" in operation.get("responses", {}):
                operation["responses"]["204"].pop("content", None)
    return schema


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
