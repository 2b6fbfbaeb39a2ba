"""What every Graph endpoint shares: version check, token and appsecret_proof checks, fault
injection, usage accounting and headers, the error envelope, ``fields`` projection, cursor paging
and the request log. Endpoint modules register plain handlers with ``graph_endpoint``.
"""

from __future__ import annotations

import base64
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from flask import Blueprint, Flask, Request, Response, current_app, jsonify, request
from werkzeug.routing import BaseConverter

from platform_sandbox import errors, tokens
from platform_sandbox.faults import FaultKind, FaultSpec
from platform_sandbox.params import GraphParams, access_token_of
from platform_sandbox.state import SandboxState
from platform_sandbox.usage import BucType
from platform_sandbox.world import AccountRole, AdAccount, AppMode, AppRole, Token, TokenKind

EXTENSION_KEY = "platform_sandbox"
VERSION_PATTERN = re.compile(r"v(\d+)\.0")
Payload = dict[str, Any]
Handler = Callable[..., Payload]


class GraphVersionConverter(BaseConverter):
    """Matches ``v25.0``-style path segments; the accepted range is checked per call."""

    regex = r"v[0-9]+\.[0-9]+"


def current_state() -> SandboxState:
    """The sandbox state of the Flask app serving this request."""
    state: SandboxState = current_app.extensions[EXTENSION_KEY]
    return state


@dataclass
class GraphCall:
    """One authenticated Graph request, as handlers see it."""

    state: SandboxState
    params: GraphParams
    token: Token
    method: str
    now: float
    account_id: str | None = None
    buc: BucType | None = None

    @property
    def user_id(self) -> str:
        assert self.token.user_id is not None  # graph_endpoint only lets user tokens through
        return self.token.user_id

    def account(self, account_id: str, *, write: bool, buc: BucType) -> AdAccount:
        """The ad account this call acts on, after the access gates of docs/platform-notes.md §7.2.

        Counts the call against the account's ``buc`` quota (raising 80003/80004 when spent),
        then raises 100/33 when the user has no role on it, 200 or 270 for a development-mode app,
        294/200 for a missing scope and 200/1713092 for a write by an analyst.
        """
        world = self.state.world
        account = world.accounts.get(account_id)
        if account is None or self.user_id not in account.roles:
            raise errors.unsupported_request(self.method, f"act_{account_id}")
        self.account_id, self.buc = account_id, buc
        self.state.usage.count_buc_call(self.now, account_id, buc, world.app.ads_access_tier)
        self.check_app_access()
        self.require_scope(write=write)
        if write and account.roles[self.user_id] is AccountRole.ANALYST:
            raise errors.no_write_permission(account_id)
        return account

    def check_app_access(self) -> None:
        """Raise 200 for a user without a role on a development-mode app, 270 below full access."""
        app = self.state.world.app
        roles = app.roles.get(self.user_id, set())
        if app.mode is AppMode.DEVELOPMENT and not roles:
            raise errors.app_in_development_mode()
        if app.ads_access_tier == "development_access" and AppRole.ADMIN not in roles:
            raise errors.development_access_level()

    def require_scope(self, *, write: bool) -> None:
        """Raise 294 (write) or 200 (read) unless the token carries ads_management or ads_read."""
        scopes = set(self.token.scopes)
        if "ads_management" in scopes:
            return
        if write:
            raise errors.missing_permission("ads_management")
        if "ads_read" not in scopes:
            raise errors.missing_permission("ads_read")


def graph_endpoint(blueprint: Blueprint, rule: str, methods: Iterable[str]) -> Callable[[Handler], Handler]:
    """Register ``handler(call, **path_args) -> dict`` at ``/<version>{rule}`` for user-token calls."""

    def register(handler: Handler) -> Handler:
        def view(version: str, **path_args: str) -> Response:
            return dispatch(version, lambda call: handler(call, **path_args), needs_user=True)

        blueprint.add_url_rule(
            f"/<graph_version:version>{rule}", handler.__name__, view, methods=list(methods)
        )
        return handler

    return register


def public_endpoint(blueprint: Blueprint, rule: str, methods: Iterable[str]) -> Callable[[Handler], Handler]:
    """Register a Graph handler that authenticates on its own (OAuth token exchange, debug_token)."""

    def register(handler: Handler) -> Handler:
        def view(version: str) -> Response:
            return dispatch(version, handler, needs_user=False)

        blueprint.add_url_rule(
            f"/<graph_version:version>{rule}", handler.__name__, view, methods=list(methods)
        )
        return handler

    return register


def dispatch(version: str, run: Callable[[Any], Payload], *, needs_user: bool) -> Response:
    """Run one Graph call end to end and turn its outcome into a JSON response.

    ``run`` receives a ``GraphCall`` (or the ``GraphParams`` when ``needs_user`` is false).
    """
    state = current_state()
    params = GraphParams.from_request(request)
    path = request.path.removeprefix(f"/{version}")
    fault = _take_fault(state, path)
    if fault is not None and fault.kind is FaultKind.DELAY:
        time.sleep(fault.seconds)  # outside the lock: a slow call must not stall the others
    with state.lock:
        now = state.clock.now()
        call: GraphCall | None = None
        try:
            check_version(version, state)
            state.usage.count_app_call(now)
            if not needs_user:
                _raise_fault(state, fault, path, None)
                payload = run(params)
            else:
                call = _authenticate(state, request, params, now, fault, path)
                payload = run(call)
            if fault is not None and fault.kind is FaultKind.LOST_ANSWER:
                raise errors.GraphError(
                    fault.message or "An unexpected error has occurred. Please retry your request later.",
                    fault.code or 2,
                    fault.subcode,
                    is_transient=True,
                    http_status=fault.http_status if fault.http_status >= 500 else 500,
                )
            response = jsonify(payload)
        except errors.GraphError as error:
            response = _error_response(error)
        _add_usage_headers(state, response, call, now)
        _log(state, version, path, params, response)
        return response


def check_version(version: str, state: SandboxState) -> None:
    """Raise 2635 below ``min_version`` and 2500 above ``max_version`` (docs/platform-notes.md §9)."""
    match = VERSION_PATTERN.fullmatch(version)
    number = int(match.group(1)) if match else -1
    if number < state.config.min_version:
        raise errors.deprecated_version(version)
    if number > state.config.max_version:
        raise errors.unknown_version(version)


def _authenticate(
    state: SandboxState, req: Request, params: GraphParams, now: float, fault: FaultSpec | None, path: str
) -> GraphCall:
    world = state.world
    value = access_token_of(req, params)
    token = tokens.validate_token(world, value, now)
    _raise_fault(state, fault, path, token)
    # Faults may expire or revoke the token just used, so validate once more.
    token = tokens.validate_token(world, value, now)
    if token.kind is not TokenKind.USER:
        raise errors.user_token_required()
    if state.config.require_appsecret_proof:
        tokens.check_appsecret_proof(
            world.app.secret, token.value, params.text("appsecret_proof"), params.text("appsecret_time")
        )
    return GraphCall(state, params, token, req.method, now)


def _take_fault(state: SandboxState, path: str) -> FaultSpec | None:
    with state.lock:
        return state.faults.take(request.method, path)


def _raise_fault(state: SandboxState, fault: FaultSpec | None, path: str, token: Token | None) -> None:
    """Apply an injected fault: raise its error, or expire/revoke the caller's token."""
    if fault is None or fault.kind in (FaultKind.DELAY, FaultKind.LOST_ANSWER):
        return
    now = state.clock.now()
    if fault.kind is FaultKind.EXPIRE_TOKEN and token is not None:
        token.expires_at = now - 1
    elif fault.kind is FaultKind.REVOKE_TOKEN and token is not None:
        token.revoked_subcode = fault.subcode or 460
    elif fault.kind is FaultKind.TRANSIENT:
        raise errors.transient_failure()
    elif fault.kind is FaultKind.THROTTLE:
        code = fault.code or 80003
        buc = BucType.ADS_MANAGEMENT if code == 80004 else BucType.CUSTOM_AUDIENCE
        account_id = _account_in_path(state, path) or "0"
        headers = state.usage.throttle_headers(
            account_id, buc, fault.regain_minutes, state.world.app.ads_access_tier
        )
        raise errors.throttled(code, fault.subcode or 2446079, headers)
    elif fault.kind is FaultKind.ERROR:
        raise errors.GraphError(
            fault.message or "Injected error", fault.code or 1, fault.subcode, http_status=fault.http_status
        )


def _account_in_path(state: SandboxState, path: str) -> str | None:
    """The ad account a path concerns: ``/act_<id>/...`` or the owner of ``/<object_id>/...``."""
    first = path.strip("/").split("/")[0]
    if first.startswith("act_"):
        return first.removeprefix("act_")
    audience = state.world.audiences.get(first)
    if audience is not None:
        return audience.account_id
    ad_object = state.world.ad_objects.get(first)
    return ad_object.account_id if ad_object is not None else None


def _error_response(error: errors.GraphError) -> Response:
    trace_id = errors.new_trace_id()
    response = jsonify(error.envelope(trace_id))
    response.status_code = error.http_status
    response.headers.update(error.headers)
    response.headers["x-fb-trace-id"] = trace_id
    return response


def _add_usage_headers(state: SandboxState, response: Response, call: GraphCall | None, now: float) -> None:
    account_id = call.account_id if call else None
    buc = call.buc if call else None
    for name, value in state.usage.headers(now, account_id, buc, state.world.app.ads_access_tier).items():
        response.headers.setdefault(name, value)


def _log(state: SandboxState, version: str, path: str, params: GraphParams, response: Response) -> None:
    entry: dict[str, Any] = {
        "method": request.method,
        "version": version,
        "path": path,
        "params": params.redacted(),
        "status": response.status_code,
    }
    body = response.get_json(silent=True)
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        error = body["error"]
        entry["error"] = {
            "code": error.get("code"),
            "subcode": error.get("error_subcode"),
            "fbtrace_id": error.get("fbtrace_id"),
        }
    state.requests.record(entry)


# Response shaping ---------------------------------------------------------------------------------


def project(node: Payload, params: GraphParams, *, default: tuple[str, ...], node_type: str) -> Payload:
    """``node`` reduced to the requested ``fields`` (``default`` when none); unknown fields raise 100."""
    names = params.fields() or list(default)
    unknown = [name for name in names if name not in node]
    if unknown:
        raise errors.nonexisting_field(unknown[0], node_type)
    return {name: node[name] for name in ["id", *names] if name in node}


def edge_page(nodes: list[Payload], params: GraphParams, *, node_type: str) -> Payload:
    """One page of an edge (a list): the nodes that pass ``filtering``, each reduced to the requested
    ``fields``, and to ``id`` alone when none are asked for, as the platform answers
    (docs/platform-notes.md §2.4, §5)."""
    filters = filtering(params)
    kept = [node for node in nodes if passes(node, filters)]
    return paged([project(node, params, default=(), node_type=node_type) for node in kept], params)


# The ``filtering`` operators the sandbox evaluates (docs/platform-notes.md §2.4); on text fields.
FILTER_OPERATORS: dict[str, Callable[[str, Any], bool]] = {
    "EQUAL": lambda field, value: field == str(value),
    "NOT_EQUAL": lambda field, value: field != str(value),
    "CONTAIN": lambda field, value: str(value) in field,
    "NOT_CONTAIN": lambda field, value: str(value) not in field,
    "IN": lambda field, value: isinstance(value, list) and field in [str(v) for v in value],
    "NOT_IN": lambda field, value: isinstance(value, list) and field not in [str(v) for v in value],
}


@dataclass(frozen=True)
class EdgeFilter:
    field: str
    operator: str
    value: Any


def filtering(params: GraphParams) -> list[EdgeFilter]:
    """The edge's ``filtering`` parameter: a JSON list of ``{field, operator, value}``; malformed -> 100."""
    raw = params.json("filtering")
    if raw is None:
        return []
    if not isinstance(raw, list) or not all(isinstance(item, dict) for item in raw):
        raise errors.invalid_parameter(
            "filtering must be a list of {field, operator, value}", blame="filtering"
        )
    found = []
    for item in raw:
        field, operator = item.get("field"), str(item.get("operator", "")).upper()
        if not isinstance(field, str) or operator not in FILTER_OPERATORS or "value" not in item:
            raise errors.invalid_parameter(
                f"Invalid filter {item}: operator must be one of {', '.join(FILTER_OPERATORS)}",
                blame="filtering",
            )
        found.append(EdgeFilter(field, operator, item["value"]))
    return found


def passes(node: Payload, filters: list[EdgeFilter]) -> bool:
    """Whether ``node`` satisfies every filter; a field the node does not have never matches."""
    for edge_filter in filters:
        value = node.get(edge_filter.field)
        if value is None or not FILTER_OPERATORS[edge_filter.operator](str(value), edge_filter.value):
            return False
    return True


def paged(items: list[Payload], params: GraphParams) -> Payload:
    """One page of ``items`` with Graph cursor paging; ``paging.next`` only when more remain."""
    limit = min(max(params.integer("limit") or 25, 1), 500)
    after = params.text("after")
    start = _decode_cursor(after) + 1 if after else 0
    page = items[start : start + limit]
    result: Payload = {"data": page}
    if not page:
        return result
    end = start + len(page) - 1
    paging: Payload = {"cursors": {"before": _encode_cursor(start), "after": _encode_cursor(end)}}
    if end + 1 < len(items):
        query = {**request.args.to_dict(), "limit": str(limit), "after": _encode_cursor(end)}
        paging["next"] = f"{request.base_url}?{urlencode(query)}"
    result["paging"] = paging
    return result


def _encode_cursor(index: int) -> str:
    return base64.urlsafe_b64encode(str(index).encode()).decode()


def _decode_cursor(cursor: str) -> int:
    try:
        return int(base64.urlsafe_b64decode(cursor.encode()).decode())
    except ValueError as exc:
        raise errors.invalid_parameter("Invalid cursor", blame="after") from exc


def register_error_handlers(app: Flask) -> None:
    """Unknown paths and methods answer with the Graph envelope, as the platform does.

    A versioned Graph path is a Graph call like any other: its version is checked and its token
    validated (104/190) before the answer says anything about what exists, so a caller without a
    valid token learns nothing (docs/platform-notes.md §5). Then a path below an object the token
    can see that leads nowhere (an edge the node does not have) is 2500 "Unknown path components";
    an object that does not exist or that the token may not see, or a method the path does not
    support, is 100/33 (docs/platform-notes.md §5).
    """

    def unknown_graph_path(version: str, *, method_allowed: bool) -> Response:
        node_id, *rest = [part for part in request.path.strip("/").split("/")[1:] if part] or [""]

        def refuse(call: GraphCall) -> Payload:
            if method_allowed and rest and _visible(call, node_id):
                raise errors.unknown_path(rest)
            object_id = node_id if method_allowed else request.path.strip("/").split("/")[-1]
            raise errors.unsupported_request(call.method, object_id)

        return dispatch(version, refuse, needs_user=True)

    def choose(error: Exception) -> Response:
        first = request.path.strip("/").split("/")[0]
        if VERSION_PATTERN.fullmatch(first):
            return unknown_graph_path(first, method_allowed=getattr(error, "code", 404) == 404)
        if request.path.startswith("/_admin"):
            object_id = request.path.strip("/").split("/")[-1]
            return _error_response(errors.unsupported_request(request.method, object_id))
        return _error_response(errors.deprecated_version(""))

    app.register_error_handler(404, choose)
    app.register_error_handler(405, choose)


def _visible(call: GraphCall, node_id: str) -> bool:
    """Whether ``node_id`` names an object this call's user may read: themselves (``me``), an ad
    account they have a role on, or an audience, ad object, pixel or Page of such an account."""
    world = call.state.world
    if node_id in ("me", call.user_id):
        return True
    if node_id.startswith("act_"):
        account = world.accounts.get(node_id.removeprefix("act_"))
        return account is not None and call.user_id in account.roles
    audience = world.audiences.get(node_id)
    if audience is not None and not audience.deleted:
        owner = audience.account_id
    elif node_id in world.ad_objects:
        owner = world.ad_objects[node_id].account_id
    elif node_id in world.pixels:
        owner = world.pixels[node_id].account_id
    else:
        return node_id in world.pages
    account = world.accounts.get(owner)
    return account is not None and call.user_id in account.roles
