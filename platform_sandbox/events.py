"""The Conversions API: ``POST /<pixel_id>/events`` and what a pixel received (docs/platform-notes.md §11).

A request is checked whole (``event_checks``): any invalid event fails it and nothing is kept. An
accepted request answers ``events_received`` (every event, duplicates included), ``messages`` and
``fbtrace_id``; each event is then de-duplicated on ``(event_name, event_id)`` within 48 hours of
the first (test events apart from live ones), counted per pixel, and the latest are kept for the
admin API. Live events move the pixel's ``last_fired_time``; test events (``test_event_code``) only
show in the test counts.
"""

from __future__ import annotations

from collections import deque
from datetime import UTC, datetime
from typing import Any

from flask import Blueprint

from platform_sandbox import errors
from platform_sandbox.event_checks import check_events, decode_events
from platform_sandbox.graph import GraphCall, Payload, graph_endpoint
from platform_sandbox.world import Pixel, PixelActivity, World

blueprint = Blueprint("events", __name__)


@graph_endpoint(blueprint, "/<pixel_id>/events", ["POST"])
def post_events(call: GraphCall, pixel_id: str) -> Payload:
    """Receive up to ``max_events_per_request`` server events for a pixel of an ad account the user
    has a role on (else 100/33), with ``ads_management`` (else 294)."""
    world = call.state.world
    pixel = world.pixels.get(pixel_id)
    account = world.accounts.get(pixel.account_id) if pixel is not None else None
    if pixel is None or account is None or call.user_id not in account.roles:
        raise errors.unsupported_request("POST", pixel_id)
    call.check_app_access()
    call.require_scope(write=True)
    config = call.state.config
    events = check_events(
        decode_events(call.params.json("data"), config.max_events_per_request), call.now, config
    )
    test_event_code = call.params.text("test_event_code")
    activity = activity_of(world, pixel_id, config.events_kept_per_pixel)
    for event in events:
        _keep(activity, event, test_event_code, call.now, config.dedup_window_seconds)
    activity.received += len(events)
    return {"events_received": len(events), "messages": [], "fbtrace_id": errors.new_trace_id()}


def activity_of(world: World, pixel_id: str, kept: int) -> PixelActivity:
    """The pixel's activity record, created empty on first use."""
    activity = world.pixel_activity.get(pixel_id)
    if activity is None:
        activity = world.pixel_activity[pixel_id] = PixelActivity(events=deque(maxlen=kept))
    return activity


def last_fired_time(world: World, pixel: Pixel) -> str | None:
    """When the pixel last received a live event, in the Graph's ``2026-06-24T10:00:00+0000`` form."""
    activity = world.pixel_activity.get(pixel.pixel_id)
    if activity is None or activity.last_fired_time is None:
        return None
    return datetime.fromtimestamp(activity.last_fired_time, UTC).strftime("%Y-%m-%dT%H:%M:%S+0000")


def _keep(
    activity: PixelActivity, event: dict[str, Any], test_event_code: str | None, now: float, window: int
) -> None:
    name = str(event["event_name"])
    event_id = event.get("event_id")
    duplicate = False
    if event_id is not None and event_id != "":
        key = (name, str(event_id), test_event_code)
        first = activity.seen.get(key)
        duplicate = first is not None and now - first <= window
        if not duplicate:
            activity.seen[key] = now
    activity.events.append(
        {"received_at": now, "test_event_code": test_event_code, "deduplicated": duplicate, "event": event}
    )
    if duplicate:
        activity.deduplicated += 1
        return
    if test_event_code is None:
        activity.counted[name] += 1
        activity.last_fired_time = now
    else:
        activity.test_counted[name] += 1
