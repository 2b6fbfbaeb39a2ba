"""The Conversions API (docs/platform-notes.md §11): one request sends up to ``MAX_EVENTS_PER_CALL``
server events to a pixel.

Events arrive here built and checked (``shared.events``); this module only moves them. Splitting a
stream into batches, and a refused batch into what can still succeed, is the caller's job.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from shared.errors import ValidationFailed
from shared.platform.client import GraphClient
from shared.platform.errors import EVENTS_REFUSED, PlatformRequestFailed, build_error

# The documented maximum of events in one request's ``data`` (docs/platform-notes.md §11.1).
MAX_EVENTS_PER_CALL = 1000
# 100/33 is the pixel itself (missing or not visible to the token), not what an event says.
_OBJECT_NOT_FOUND_SUBCODE = 33


class EventsReceived(BaseModel):
    """The platform's answer to an accepted request: how many events it received (duplicates of
    earlier events included: the platform does not say which it dropped), its messages and trace id."""

    model_config = ConfigDict(frozen=True)

    events_received: int
    messages: tuple[str, ...] = ()
    fbtrace_id: str | None = None

    @classmethod
    def from_graph(cls, body: Mapping[str, Any]) -> EventsReceived:
        messages = body.get("messages")
        trace = body.get("fbtrace_id")
        return cls(
            events_received=int(body.get("events_received") or 0),
            messages=tuple(str(message) for message in messages) if isinstance(messages, list) else (),
            fbtrace_id=str(trace) if trace is not None else None,
        )


def send_events(
    client: GraphClient,
    pixel_id: str,
    events: Sequence[Mapping[str, Any]],
    *,
    test_event_code: str | None = None,
) -> EventsReceived:
    """POST ``events`` (1 to ``MAX_EVENTS_PER_CALL`` JSON-ready event objects) to ``pixel_id``'s
    ``/events`` edge as one JSON body ``{"data": [...], "test_event_code": ...}``, as production
    integrations send it (docs/platform-notes.md §11.1).

    Retried on transient failures only when every event carries an ``event_id``: the platform then
    keeps one of each ``(event_name, event_id)`` (§11.8), so a resend never counts twice. Raises
    ``EventsRefused`` when the platform refuses the request for what an event says (code 100: nothing
    of it was kept), and the client's other ``PlatformError``s (throttling, token, unavailable).
    """
    if not 0 < len(events) <= MAX_EVENTS_PER_CALL:
        raise ValidationFailed(f"A request carries 1 to {MAX_EVENTS_PER_CALL} events.", field="data")
    body: dict[str, Any] = {"data": list(events)}
    if test_event_code:
        body["test_event_code"] = test_event_code
    idempotent = all(event.get("event_id") for event in events)
    try:
        response = client.post(f"{pixel_id}/events", body, idempotent=idempotent, json_body=True)
    except PlatformRequestFailed as error:
        # A code-100 refusal without a rule of its own (an undocumented 2804xxx subcode) is still a
        # refusal of the request's content, which splitting the batch can get round.
        detail = error.detail
        if detail is not None and detail.code == 100 and detail.subcode != _OBJECT_NOT_FOUND_SUBCODE:
            raise build_error(EVENTS_REFUSED, detail) from error
        raise
    return EventsReceived.from_graph(response.body)
