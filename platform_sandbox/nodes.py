"""``/<object_id>``: reading, updating and deleting any object by its id.

See docs/platform-notes.md §2.4, §2.5.
"""

from __future__ import annotations

from urllib.parse import urlparse

from flask import Blueprint, Response, request

from platform_sandbox import accounts, audiences, errors, publishing, tokens
from platform_sandbox.graph import GraphCall, GraphParams, Payload, current_state, dispatch, project
from platform_sandbox.params import access_token_of
from platform_sandbox.world import AppMode, TokenKind

blueprint = Blueprint("nodes", __name__)


def view(version: str, object_id: str) -> Response:
    """The app's own node takes an app token; every other id is a user-token call."""
    if object_id == current_state().world.app.app_id:
        return dispatch(version, app_node, needs_user=False)
    return dispatch(version, lambda call: node(call, object_id), needs_user=True)


blueprint.add_url_rule(
    "/<graph_version:version>/<object_id>", "node", view, methods=["GET", "POST", "DELETE"]
)


def app_node(params: GraphParams) -> Payload:
    """``GET /{app-id}`` with the app token: name, mode and ``app_domains`` (what redirect URIs may use)."""
    state = current_state()
    world = state.world
    token = tokens.validate_token(world, access_token_of(request, params), state.clock.now())
    if token.kind is not TokenKind.APP or token.app_id != world.app.app_id:
        raise errors.GraphError("(#100) Requires an app access token of this app", 100)
    app = world.app
    node = {
        "id": app.app_id,
        "name": app.name,
        # The dialog accepts redirect URIs under these prefixes; the node reports their domains.
        "app_domains": sorted(
            {urlparse(prefix).hostname or prefix for prefix in app.allowed_redirect_prefixes}
        ),
        "is_live": app.mode is AppMode.LIVE,
    }
    return project(node, params, default=("name",), node_type="Application")


def node(call: GraphCall, object_id: str) -> Payload:
    """Route by what the id names: audiences and ad objects support GET, POST (update) and DELETE."""
    world = call.state.world
    audience = world.audiences.get(object_id)
    if audience is not None:
        action = {
            "GET": audiences.read_audience,
            "POST": audiences.update_audience,
            "DELETE": audiences.delete_audience,
        }[call.method]
        return action(call, audience)
    ad_object = world.ad_objects.get(object_id)
    if ad_object is not None:
        on_object = {
            "GET": publishing.read_ad_object,
            "POST": publishing.update_ad_object,
            "DELETE": publishing.delete_ad_object,
        }[call.method]
        return on_object(call, ad_object)
    pixel = world.pixels.get(object_id)
    if pixel is not None and call.method == "GET":
        return read_pixel(call, object_id)
    raise errors.unsupported_request(call.method, object_id)


def read_pixel(call: GraphCall, pixel_id: str) -> Payload:
    """``GET /<pixel_id>``: the pixel's fields for a user with a role on its ad account (else 100/33),
    ``id`` and ``name`` unless ``fields`` asks for more (docs/platform-notes.md §11.7)."""
    world = call.state.world
    pixel = world.pixels[pixel_id]
    account = world.accounts.get(pixel.account_id)
    if account is None or call.user_id not in account.roles:
        raise errors.unsupported_request("GET", pixel_id)
    call.require_scope(write=False)
    return project(accounts.pixel_node(pixel, world), call.params, default=("name",), node_type="AdsPixel")
