"""What every API endpoint shares (docs/payments-notes.md §1, §5, §6): the secret key, the
``Stripe-Account`` header, bracket parameters, fault injection, idempotency keys, the error
envelope, ``Request-Id`` and the request log. Endpoint modules register plain handlers with
``api_endpoint``; a handler gets an ``ApiCall`` and returns the JSON object to answer with.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from flask import Blueprint, Flask, Response, current_app, jsonify, request

from payments_sandbox import errors, lifecycle
from payments_sandbox.events import RequestOrigin
from payments_sandbox.faults import FaultKind, FaultSpec
from payments_sandbox.idempotency import Saved, fingerprint
from payments_sandbox.params import Params, Schema, check_known, parse_pairs
from payments_sandbox.state import PaymentsSandboxState
from payments_sandbox.world import Account, new_id

EXTENSION_KEY = "payments_sandbox"
Payload = dict[str, Any]
Handler = Callable[..., Payload]
PLATFORM_SCOPE = "platform"


def current_state() -> PaymentsSandboxState:
    """The sandbox state of the Flask app serving this request."""
    state: PaymentsSandboxState = current_app.extensions[EXTENSION_KEY]
    return state


def public_base(state: PaymentsSandboxState) -> str:
    """Where the hosted pages are: the configured public URL, else the host this request came to."""
    return (state.config.public_url or request.host_url).rstrip("/")


@dataclass
class ApiCall:
    """One authenticated API request, as handlers see it."""

    state: PaymentsSandboxState
    params: Params
    method: str
    path: str
    request_id: str
    idempotency_key: str | None
    # The connected account named by `Stripe-Account`, or None: the platform itself.
    account: Account | None = None
    now: float = field(default=0.0)

    @property
    def account_id(self) -> str | None:
        return self.account.account_id if self.account else None

    @property
    def origin(self) -> RequestOrigin:
        return RequestOrigin(self.request_id, self.idempotency_key)

    def expand(self) -> list[str]:
        return self.params.strings("expand")


def api_endpoint(
    blueprint: Blueprint, rule: str, methods: Iterable[str], schema: Schema | None = None
) -> Callable[[Handler], Handler]:
    """Register ``handler(call, **path_args) -> dict`` at ``/v1{rule}``; ``schema`` lists the accepted
    parameters (None: any)."""

    def register(handler: Handler) -> Handler:
        def view(**path_args: str) -> Response:
            return dispatch(lambda call: handler(call, **path_args), schema)

        blueprint.add_url_rule(f"/v1{rule}", handler.__name__, view, methods=list(methods))
        return handler

    return register


def dispatch(run: Callable[[ApiCall], Payload], schema: Schema | None) -> Response:
    """Run one API call end to end and turn its outcome into a JSON response."""
    state = current_state()
    method, path = request.method, request.path
    request_id = new_id("req", 14)
    key = request.headers.get("Idempotency-Key") if method == "POST" else None
    scope = request.headers.get("Stripe-Account") or PLATFORM_SCOPE
    with state.lock:
        fault = state.faults.take(method, path)
    claimed = False
    replayed = False
    params_tree: dict[str, Any] = {}
    try:
        if fault is not None and fault.kind is FaultKind.DELAY:
            if key is not None:
                # The key is in use while this request runs: a concurrent twin gets a 409.
                with state.lock:
                    state.idempotency.claim(scope, key)
                claimed = True
            time.sleep(fault.seconds)  # outside the lock: a slow call must not stall the others
        with state.lock:
            lifecycle.sweep(state)
            call = _prepare(state, method, path, request_id, key, schema)
            params_tree = call.params.tree
            status, body, replayed = _execute(state, call, scope, run, fault, held=claimed)
            response = jsonify(body)
            response.status_code = status
    except errors.PaymentsError as error:
        response = jsonify(error.envelope())
        response.status_code = error.http_status
        response.headers.update(error.headers)
    finally:
        if claimed and key is not None:
            with state.lock:
                state.idempotency.release(scope, key)
    response.headers["Request-Id"] = request_id
    response.headers["Stripe-Version"] = request.headers.get("Stripe-Version") or state.config.api_version
    if key is not None:
        response.headers["Idempotency-Key"] = key
    if replayed:
        response.headers["Idempotent-Replayed"] = "true"
    with state.lock:
        _log(state, request_id, key, params_tree, response, replayed)
    return response


def _prepare(
    state: PaymentsSandboxState,
    method: str,
    path: str,
    request_id: str,
    key: str | None,
    schema: Schema | None,
) -> ApiCall:
    """Authenticate, resolve the account, parse the parameters. Raises before anything runs."""
    _authenticate(state)
    account = _connected_account(state)
    pairs = request.form.items(multi=True) if method == "POST" else request.args.items(multi=True)
    tree = parse_pairs(pairs)
    if schema is not None:
        check_known(tree, schema)
    return ApiCall(state, Params(tree), method, path, request_id, key, account, state.now())


def _execute(
    state: PaymentsSandboxState,
    call: ApiCall,
    scope: str,
    run: Callable[[ApiCall], Payload],
    fault: FaultSpec | None,
    *,
    held: bool,
) -> tuple[int, Payload, bool]:
    """Faults, the idempotency replay, the handler and the save of its answer: (status, body, replayed)."""
    if fault is not None and fault.kind in (FaultKind.RATE_LIMIT, FaultKind.UNAVAILABLE, FaultKind.ERROR):
        raise fault.error()
    key = call.idempotency_key
    print_ = fingerprint(call.method, call.path, call.params.tree)
    if key is not None:
        state.idempotency.check_key(key)
        saved = state.idempotency.lookup(scope, key, print_, call.now, held=held)
        if saved is not None:
            return saved.status, saved.body, True
    try:
        body = run(call)
    except errors.PaymentsError as error:
        if key is not None and not error.is_validation:
            state.idempotency.save(scope, key, Saved(print_, error.http_status, error.envelope(), call.now))
        raise
    if key is not None:
        state.idempotency.save(scope, key, Saved(print_, 200, body, call.now))
    if fault is not None and fault.kind is FaultKind.LOST_ANSWER:
        raise fault.error()
    return 200, body, False


def _authenticate(state: PaymentsSandboxState) -> None:
    """Bearer (what the SDK sends) or Basic with the key as user name (what curl -u sends)."""
    header = request.headers.get("Authorization", "")
    scheme, _, value = header.partition(" ")
    key = ""
    if scheme.lower() == "bearer":
        key = value.strip()
    elif scheme.lower() == "basic":
        try:
            key = base64.b64decode(value.strip()).decode().split(":", 1)[0]
        except (binascii.Error, UnicodeDecodeError):
            key = ""
    if not key:
        raise errors.no_api_key()
    if not hmac.compare_digest(key.encode(), state.config.secret_key.encode()):
        raise errors.invalid_api_key(key)


def _connected_account(state: PaymentsSandboxState) -> Account | None:
    account_id = request.headers.get("Stripe-Account")
    if not account_id:
        return None
    account = state.world.accounts.get(account_id)
    if account is None:
        raise errors.account_invalid(state.config.secret_key, account_id)
    return account


def _log(
    state: PaymentsSandboxState,
    request_id: str,
    key: str | None,
    params: dict[str, Any],
    response: Response,
    replayed: bool,
) -> None:
    entry: dict[str, Any] = {
        "method": request.method,
        "path": request.path,
        "account": request.headers.get("Stripe-Account"),
        "idempotency_key": key,
        "stripe_version": request.headers.get("Stripe-Version"),
        "params": params,
        "status": response.status_code,
        "replayed": replayed,
        "request_id": request_id,
    }
    body = response.get_json(silent=True)
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        entry["error"] = {key_: body["error"].get(key_) for key_ in ("type", "code", "param")}
    state.requests.record(entry)


# Response shaping ---------------------------------------------------------------------------------


def list_object(items: list[Payload], url: str, params: Params) -> Payload:
    """A page of ``items`` (newest first) as the provider's list: ``limit`` (1-100, default 10),
    ``starting_after`` an id in the list."""
    limit = params.integer("limit")
    limit = 10 if limit is None else limit
    if not 1 <= limit <= 100:
        raise errors.invalid_request("This value must be between 1 and 100.", param="limit")
    start = 0
    after = params.text("starting_after")
    if after:
        ids = [item["id"] for item in items]
        if after not in ids:
            raise errors.invalid_request(f"No such object: '{after}'", param="starting_after")
        start = ids.index(after) + 1
    page = items[start : start + limit]
    return {"object": "list", "data": page, "has_more": start + limit < len(items), "url": url}


def register_error_handlers(app: Flask) -> None:
    """Unknown paths and methods answer with the provider's envelope."""

    def unrecognized(_error: Exception) -> Response:
        response = jsonify(errors.unrecognized_url(request.method, request.path).envelope())
        response.status_code = 404
        response.headers["Request-Id"] = new_id("req", 14)
        return response

    app.register_error_handler(404, unrecognized)
    app.register_error_handler(405, unrecognized)
