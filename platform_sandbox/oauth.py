"""OAuth 2.0: login dialog, code and token exchange, ``debug_token`` (docs/platform-notes.md §1.1-§1.5)."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from html import escape
from urllib.parse import urlencode

from flask import Blueprint, redirect, request
from flask.typing import ResponseReturnValue

from platform_sandbox import errors, tokens
from platform_sandbox.graph import Payload, check_version, current_state, public_endpoint
from platform_sandbox.params import GraphParams, access_token_of
from platform_sandbox.state import SandboxState
from platform_sandbox.world import AuthCode, TokenKind

blueprint = Blueprint("oauth", __name__)

DENIED = {"error_reason": "user_denied", "error": "access_denied", "error_description": "Permissions error."}
DOMAIN_MISSING = (
    "Can't load URL: The domain of this URL isn't included in the app's domains. "
    "To be able to load this URL, add all domains and sub-domains of your app "
    "to the App Domains field in your app settings."
)


class DialogRefused(Exception):
    """The dialog cannot send the user back: bad client_id or an unregistered redirect_uri."""


@dataclass(frozen=True)
class DialogRequest:
    client_id: str
    redirect_uri: str
    state: str
    scope: str

    @classmethod
    def from_values(cls, values: GraphParams) -> DialogRequest:
        return cls(
            client_id=values.text("client_id", "") or "",
            redirect_uri=values.text("redirect_uri", "") or "",
            state=values.text("state", "") or "",
            scope=values.text("scope", "") or "",
        )

    def requested_scopes(self) -> list[str]:
        # The dialog accepts comma- or space-separated scopes (docs/platform-notes.md §1.1).
        return [scope for scope in self.scope.replace(",", " ").split() if scope]


def decide(state: SandboxState, dialog: DialogRequest, *, approve: bool, user_id: str | None = None) -> str:
    """Where the dialog redirects after the user approves or denies; issues a code on approval.

    In: the dialog parameters and the decision. Out: ``redirect_uri`` with ``code`` and ``state``, or
    with the documented denial parameters. Raises ``DialogRefused`` when no redirect may happen.
    """
    world = state.world
    check_dialog(state, dialog)
    if not approve:
        return _with_query(dialog.redirect_uri, {**DENIED, "state": dialog.state})
    code = AuthCode(
        value=secrets.token_urlsafe(24),
        user_id=user_id or world.dialog_user_id,
        redirect_uri=dialog.redirect_uri,
        scopes=[s for s in dialog.requested_scopes() if s in tokens.GRANTABLE_SCOPES] or ["public_profile"],
        issued_at=state.clock.now(),
    )
    world.codes[code.value] = code
    return _with_query(dialog.redirect_uri, {"code": code.value, "state": dialog.state})


def check_dialog(state: SandboxState, dialog: DialogRequest) -> None:
    """Raise ``DialogRefused`` for an unknown client_id or a redirect_uri outside the app's domains.

    Refusing (instead of redirecting with an error) is what the platform does: sending the user to
    an unregistered URI is exactly what the check exists to prevent.
    """
    if dialog.client_id != state.world.app.app_id:
        raise DialogRefused("Invalid App ID: the client_id does not match any app.")
    if not dialog.redirect_uri:
        raise DialogRefused("The redirect_uri parameter is required.")
    prefixes = state.world.app.allowed_redirect_prefixes
    if prefixes and not any(dialog.redirect_uri.startswith(prefix) for prefix in prefixes):
        raise DialogRefused(DOMAIN_MISSING)


@blueprint.route("/<graph_version:version>/dialog/oauth", methods=["GET", "POST"])
def dialog(version: str) -> ResponseReturnValue:
    """GET shows the consent page; POST (its Approve/Deny forms) redirects back to the client."""
    state = current_state()
    values = GraphParams.from_request(request)
    dialog_request = DialogRequest.from_values(values)
    with state.lock:
        try:
            check_version(version, state)
            if request.method == "GET":
                check_dialog(state, dialog_request)
                return _consent_page(state, version, dialog_request), 200
            location = decide(state, dialog_request, approve=values.text("decision") == "approve")
        except DialogRefused as refused:
            return _error_page(str(refused)), 400
        except errors.GraphError as error:
            return _error_page(error.message), 400
    return redirect(location, code=302)


@public_endpoint(blueprint, "/oauth/access_token", ["GET", "POST"])
def access_token(params: GraphParams) -> Payload:
    """Exchange a code, a short-lived token (fb_exchange_token) or client credentials for a token."""
    state = current_state()
    world, now, config = state.world, state.clock.now(), state.config
    _check_client(state, params)
    grant_type = params.text("grant_type")
    if grant_type == "client_credentials":
        return {"access_token": tokens.mint_app_token(world, now).value, "token_type": "bearer"}
    if grant_type == "fb_exchange_token":
        short = tokens.validate_token(world, params.required_text("fb_exchange_token"), now)
        if short.kind is not TokenKind.USER or short.user_id is None:
            raise errors.user_token_required()
        long_lived = tokens.mint_user_token(
            world, short.user_id, short.scopes, now, config.long_lived_token_seconds
        )
        return _token_body(long_lived.value, config.long_lived_token_seconds)
    code = _redeem_code(state, params)
    token = tokens.mint_user_token(world, code.user_id, code.scopes, now, config.short_lived_token_seconds)
    return _token_body(token.value, config.short_lived_token_seconds)


@public_endpoint(blueprint, "/debug_token", ["GET"])
def debug_token(params: GraphParams) -> Payload:
    """Inspect ``input_token``; the caller must present an app token of this app.

    See docs/platform-notes.md §1.5.
    """
    state = current_state()
    world, now = state.world, state.clock.now()
    inspector = tokens.validate_token(world, access_token_of(request, params), now)
    if inspector.kind is not TokenKind.APP or inspector.app_id != world.app.app_id:
        raise errors.GraphError(
            "(#100) You must provide an app access token, or a user access token that is "
            "an owner or developer of the app",
            100,
        )
    inspected = tokens.find_token(world, params.required_text("input_token"))
    return {"data": tokens.debug_view(world, inspected, now, state.config.data_access_seconds)}


def _check_client(state: SandboxState, params: GraphParams) -> None:
    if params.required_text("client_id") != state.world.app.app_id:
        raise errors.client_id_invalid()
    if params.required_text("client_secret") != state.world.app.secret:
        raise errors.client_secret_invalid()


def _redeem_code(state: SandboxState, params: GraphParams) -> AuthCode:
    """The code's grant, marked used; raises 36009 reused, 36007 expired, 36008 redirect mismatch."""
    code = state.world.codes.get(params.required_text("code"))
    if code is None:
        raise errors.code_invalid()
    if code.used:
        raise errors.code_used()
    if state.clock.now() - code.issued_at > state.config.code_ttl_seconds:
        raise errors.code_expired()
    if params.text("redirect_uri", "") != code.redirect_uri:
        raise errors.redirect_uri_mismatch()
    code.used = True
    return code


def _token_body(value: str, expires_in: int) -> Payload:
    return {"access_token": value, "token_type": "bearer", "expires_in": expires_in}


def _with_query(url: str, values: dict[str, str]) -> str:
    separator = "&" if "?" in url else "?"
    return f"{url}{separator}{urlencode(values)}"


def _consent_page(state: SandboxState, version: str, dialog_request: DialogRequest) -> str:
    world = state.world
    user = world.users[world.dialog_user_id]
    action = f"{(state.config.dialog_base or request.host_url).rstrip('/')}/{version}/dialog/oauth"
    hidden = "".join(
        f'<input type="hidden" name="{name}" value="{escape(value)}">'
        for name, value in (
            ("client_id", dialog_request.client_id),
            ("redirect_uri", dialog_request.redirect_uri),
            ("state", dialog_request.state),
            ("scope", dialog_request.scope),
        )
    )
    scopes = "".join(f"<li>{escape(scope)}</li>" for scope in dialog_request.requested_scopes())
    return (
        "<!doctype html><html><head><title>Platform sandbox - log in</title></head><body>"
        f"<h1>{escape(world.app.name)}</h1>"
        f"<p>Continue as <strong>{escape(user.name)}</strong>? The app asks for:</p><ul>{scopes}</ul>"
        f'<form method="post" action="{escape(action)}">{hidden}'
        '<button name="decision" value="approve" type="submit">Approve</button></form>'
        f'<form method="post" action="{escape(action)}">{hidden}'
        '<button name="decision" value="deny" type="submit">Deny</button></form>'
        "</body></html>"
    )


def _error_page(message: str) -> str:
    return (
        "<!doctype html><html><head><title>Platform sandbox - error</title></head>"
        f"<body><h1>Error</h1><p>{escape(message)}</p></body></html>"
    )
