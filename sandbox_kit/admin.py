"""The admin routes both sandboxes serve alike under ``/_admin``: loopback callers only, the request
log (``/requests``) and the fault queue (``/faults``). Each sandbox adds its own routes to the blueprint.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, Protocol

from flask import Blueprint, Response, abort, jsonify, request
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sandbox_kit.faults import FaultQueue, FaultSpecLike
from sandbox_kit.request_log import RequestLog

LOOPBACK = frozenset({"127.0.0.1", "::1", "localhost"})


class AdminState[S: FaultSpecLike](Protocol):
    """What the shared routes read of a sandbox's state."""

    @property
    def lock(self) -> AbstractContextManager[Any]: ...

    @property
    def faults(self) -> FaultQueue[S]: ...

    @property
    def requests(self) -> RequestLog: ...


class ClockAdvance(BaseModel):
    """What ``POST /_admin/clock`` accepts."""

    model_config = ConfigDict(extra="forbid")
    seconds: float = Field(ge=0)


def add_shared_routes[S: FaultSpecLike](
    blueprint: Blueprint,
    *,
    current_state: Callable[[], AdminState[S]],
    read_body: Callable[[], dict[str, Any]],
    parse_fault: Callable[[dict[str, Any]], S],
    request_filters: tuple[str, ...] = (),
) -> None:
    """Serve on ``blueprint`` what both sandboxes' admin APIs do alike.

    ``read_body`` gives the request's body as the sandbox reads it, ``parse_fault`` makes the
    sandbox's ``FaultSpec`` of it (raising pydantic's ``ValidationError``: a 400), and
    ``request_filters`` names the request-log fields ``GET /requests`` also filters on by exact value.
    """

    def loopback_only() -> None:
        if request.remote_addr not in LOOPBACK:
            abort(403)

    def invalid_body(error: ValidationError) -> tuple[Response, int]:
        return jsonify({"error": "invalid request body", "details": error.errors(include_url=False)}), 400

    def requests_log() -> Response:
        """The request log, oldest first; ``?path=<regex>``, ``?method=`` and ``request_filters``
        filter it."""
        path, method = request.args.get("path"), request.args.get("method")
        fields = {name: request.args.get(name) for name in request_filters}
        state = current_state()
        with state.lock:
            return jsonify({"requests": state.requests.matching(path, method, **fields)})

    def clear_requests() -> Response:
        state = current_state()
        with state.lock:
            state.requests.clear()
            return jsonify({"requests": []})

    def add_fault() -> tuple[Response, int]:
        """Queue a fault (see the sandbox's ``faults.FaultSpec``); it fires on the next ``count``
        matching calls."""
        spec = parse_fault(read_body())
        state = current_state()
        with state.lock:
            return jsonify(state.faults.add(spec).describe()), 201

    def list_faults() -> Response:
        state = current_state()
        with state.lock:
            return jsonify({"faults": state.faults.describe()})

    def clear_faults() -> Response:
        state = current_state()
        with state.lock:
            state.faults.clear()
            return jsonify({"faults": []})

    blueprint.before_request(loopback_only)
    blueprint.register_error_handler(ValidationError, invalid_body)
    blueprint.add_url_rule("/requests", view_func=requests_log, methods=["GET"])
    blueprint.add_url_rule("/requests", view_func=clear_requests, methods=["DELETE"])
    blueprint.add_url_rule("/faults", view_func=add_fault, methods=["POST"])
    blueprint.add_url_rule("/faults", view_func=list_faults, methods=["GET"])
    blueprint.add_url_rule("/faults", view_func=clear_faults, methods=["DELETE"])
