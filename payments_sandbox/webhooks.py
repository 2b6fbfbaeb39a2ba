"""Webhook endpoints and events over the API (docs/payments-notes.md §4): endpoints registered
through ``/v1/webhook_endpoints`` (``connect=true`` for the events of connected accounts), their
signing secret shown once, and ``/v1/events`` to list what happened (``delivery_success=false``:
what no endpoint has taken yet).
"""

from __future__ import annotations

import secrets

from flask import Blueprint

from payments_sandbox import errors
from payments_sandbox.api import ApiCall, Payload, api_endpoint, list_object
from payments_sandbox.events import SUBSCRIBABLE
from payments_sandbox.world import WebhookEndpoint, new_id

blueprint = Blueprint("webhooks", __name__)

ENDPOINT_SCHEMA = {
    "url": True,
    "enabled_events": [True],
    "connect": True,
    "description": True,
    "metadata": "map",
    "api_version": True,
    "expand": [True],
}
UPDATE_SCHEMA = {
    "url": True,
    "enabled_events": [True],
    "description": True,
    "metadata": "map",
    "disabled": True,
    "expand": [True],
}
LIST_SCHEMA = {"limit": True, "starting_after": True, "ending_before": True, "expand": [True]}
EVENTS_SCHEMA = {**LIST_SCHEMA, "type": True, "types": [True], "delivery_success": True, "created": True}


@api_endpoint(blueprint, "/webhook_endpoints", ["POST"], ENDPOINT_SCHEMA)
def create_endpoint(call: ApiCall) -> Payload:
    """Register an endpoint; the answer carries its ``whsec_`` signing secret, and only this answer."""
    params = call.params
    endpoint = WebhookEndpoint(
        endpoint_id=new_id("we"),
        owner=call.account_id,
        url=_endpoint_url(call),
        enabled_events=_enabled_events(call, required=True),
        connect=bool(params.boolean("connect")),
        secret=f"whsec_{secrets.token_urlsafe(24)}",
        created=int(call.now),
        api_version=params.text("api_version"),
        description=params.text("description"),
        metadata=params.metadata("metadata"),
    )
    call.state.world.endpoints[endpoint.endpoint_id] = endpoint
    return endpoint.to_api(with_secret=True)


@api_endpoint(blueprint, "/webhook_endpoints", ["GET"], LIST_SCHEMA)
def list_endpoints(call: ApiCall) -> Payload:
    mine = [e.to_api() for e in reversed(call.state.world.endpoints.values()) if e.owner == call.account_id]
    return list_object(mine, "/v1/webhook_endpoints", call.params)


@api_endpoint(blueprint, "/webhook_endpoints/<endpoint_id>", ["GET"], {"expand": [True]})
def retrieve_endpoint(call: ApiCall, endpoint_id: str) -> Payload:
    return _endpoint(call, endpoint_id).to_api()


@api_endpoint(blueprint, "/webhook_endpoints/<endpoint_id>", ["POST"], UPDATE_SCHEMA)
def update_endpoint(call: ApiCall, endpoint_id: str) -> Payload:
    endpoint, params = _endpoint(call, endpoint_id), call.params
    if params.text("url") is not None:
        endpoint.url = _endpoint_url(call)
    if params.get("enabled_events") is not None:
        endpoint.enabled_events = _enabled_events(call, required=False)
    if params.text("description") is not None:
        endpoint.description = params.text("description") or None
    if params.get("metadata") is not None:
        endpoint.metadata = {**endpoint.metadata, **params.metadata("metadata")}
    disabled = params.boolean("disabled")
    if disabled is not None:
        endpoint.status = "disabled" if disabled else "enabled"
    return endpoint.to_api()


@api_endpoint(blueprint, "/webhook_endpoints/<endpoint_id>", ["DELETE"], {})
def delete_endpoint(call: ApiCall, endpoint_id: str) -> Payload:
    endpoint = _endpoint(call, endpoint_id)
    del call.state.world.endpoints[endpoint.endpoint_id]
    return {"id": endpoint.endpoint_id, "object": "webhook_endpoint", "deleted": True}


@api_endpoint(blueprint, "/events", ["GET"], EVENTS_SCHEMA)
def list_events(call: ApiCall) -> Payload:
    """Events of the account the call acts as, newest first; filtered by ``type`` (``*`` wildcards),
    ``types[]`` and ``delivery_success``."""
    params = call.params
    wanted_types = params.strings("types")
    single = params.text("type")
    if single is not None and wanted_types:
        raise errors.invalid_request(
            "You may only specify one of these parameters: type, types.", param="types"
        )
    success = params.boolean("delivery_success")
    events = [
        event
        for event in reversed(call.state.world.events.values())
        if event.account == call.account_id
        and (single is None or _type_matches(event.type, single))
        and (not wanted_types or event.type in wanted_types)
        # An event no endpoint wanted has nothing undelivered.
        and (success is None or (event.delivery_success is not False) is success)
    ]
    return list_object([event.to_api() for event in events], "/v1/events", params)


@api_endpoint(blueprint, "/events/<event_id>", ["GET"], {"expand": [True]})
def retrieve_event(call: ApiCall, event_id: str) -> Payload:
    event = call.state.world.events.get(event_id)
    if event is None or event.account != call.account_id:
        raise errors.resource_missing("event", event_id, "id")
    return event.to_api()


def _type_matches(event_type: str, pattern: str) -> bool:
    if pattern.endswith(".*"):
        return event_type.startswith(pattern[:-1])
    return event_type == pattern


def _endpoint(call: ApiCall, endpoint_id: str) -> WebhookEndpoint:
    endpoint = call.state.world.endpoints.get(endpoint_id)
    if endpoint is None or endpoint.owner != call.account_id:
        raise errors.resource_missing("webhook_endpoint", endpoint_id, "webhook_endpoint")
    return endpoint


def _endpoint_url(call: ApiCall) -> str:
    url = call.params.required_text("url")
    if not url.startswith(("http://", "https://")):
        raise errors.invalid_request(
            "Invalid URL: URL must be publicly accessible.", param="url", code="url_invalid"
        )
    return url


def _enabled_events(call: ApiCall, *, required: bool) -> list[str]:
    wanted = call.params.strings("enabled_events")
    if not wanted:
        if required:
            raise errors.parameter_missing("enabled_events")
        raise errors.parameter_invalid_empty("enabled_events")
    for index, name in enumerate(wanted):
        if name not in SUBSCRIBABLE:
            raise errors.invalid_request(
                f"Invalid enabled_events[{index}]: unknown event type {name} (the payments sandbox knows "
                f"{', '.join(sorted(SUBSCRIBABLE))}).",
                param=f"enabled_events[{index}]",
            )
    return wanted
