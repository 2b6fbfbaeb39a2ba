"""The Flask application of the payments sandbox: the API, the hosted pages and the admin API."""

from __future__ import annotations

from flask import Flask

from payments_sandbox import accounts, admin, checkout, disputes, pages, refunds, webhooks
from payments_sandbox.api import EXTENSION_KEY, register_error_handlers
from payments_sandbox.state import PaymentsSandboxState


def create_app(state: PaymentsSandboxState) -> Flask:
    """A Flask app serving ``state``; ``app.test_client()`` in tests, ``PaymentsSandboxServer`` over HTTP.

    Webhook deliveries are not sent by the app itself: ``PaymentsSandboxServer`` runs the dispatcher,
    and in-process tests call ``events.deliver_due`` (or ``POST /_admin/webhooks/deliver``).
    """
    app = Flask("payments_sandbox")
    app.extensions[EXTENSION_KEY] = state
    # Answers keep the order handlers build them in, like the provider's.
    app.json.sort_keys = False  # type: ignore[attr-defined]
    for module in (accounts, checkout, refunds, disputes, webhooks, pages, admin):
        app.register_blueprint(module.blueprint)
    register_error_handlers(app)
    return app
