"""``/<object_id>``: reading, updating and deleting any object by its id (reference §2.4, §2.5)."""

from __future__ import annotations

from flask import Blueprint

from platform_sandbox import audiences, errors, publishing
from platform_sandbox.graph import GraphCall, Payload, graph_endpoint

blueprint = Blueprint("nodes", __name__)


@graph_endpoint(blueprint, "/<object_id>", ["GET", "POST", "DELETE"])
def node(call: GraphCall, object_id: str) -> Payload:
    """Route by what the id names: audiences support GET/POST/DELETE, ad objects GET."""
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
    if ad_object is not None and call.method == "GET":
        return publishing.read_ad_object(call, ad_object)
    raise errors.unsupported_request(call.method, object_id)
