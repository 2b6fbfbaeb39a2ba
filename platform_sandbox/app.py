"""The Flask application of the sandbox: Graph endpoints, OAuth dialog and admin API."""

from __future__ import annotations

from flask import Flask

from platform_sandbox import accounts, admin, audiences, events, nodes, oauth, publishing
from platform_sandbox.graph import EXTENSION_KEY, GraphVersionConverter, register_error_handlers
from platform_sandbox.state import SandboxState


def create_app(state: SandboxState) -> Flask:
    """A Flask app serving ``state``; use ``app.test_client()`` in tests or ``SandboxServer`` over HTTP."""
    app = Flask("platform_sandbox")
    app.url_map.converters["graph_version"] = GraphVersionConverter
    # The official SDK asks for nodes as `/v<n>.0/act_<id>/` (a trailing slash), which the platform
    # answers like `/v25.0/act_<id>`: every rule matches with or without one (docs/platform-notes.md §5).
    app.url_map.strict_slashes = False
    app.extensions[EXTENSION_KEY] = state
    # Graph responses keep the order handlers build them in, like the platform's.
    app.json.sort_keys = False  # type: ignore[attr-defined]
    # The SDK posts 1,000 events (or 10,000 upload rows) as one form field, well past Flask's 500 kB
    # default for form fields; the platform takes them.
    app.config["MAX_FORM_MEMORY_SIZE"] = None
    for module in (oauth, accounts, audiences, publishing, events, nodes, admin):
        app.register_blueprint(module.blueprint)
    register_error_handlers(app)
    return app
