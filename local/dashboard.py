"""The dashboard's static files on their own port, with the ``config.json`` a deployment writes
beside them (in AWS: the template's generated config object in the dashboard bucket), and the
Content-Security-Policy CloudFront sends in AWS (the template's ``DashboardResponseHeaders``)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable
from typing import Any

from werkzeug.middleware.shared_data import SharedDataMiddleware
from werkzeug.serving import BaseWSGIServer, make_server
from werkzeug.wrappers import Request, Response

from local.template import ROOT

DASHBOARD_DIR = ROOT / "dashboard"


def content_security_policy(connect_to: Iterable[str]) -> str:
    """The dashboard's Content-Security-Policy: its own scripts and styles only (no inline script,
    handler or style attribute), calls to ``'self'`` and the origins in ``connect_to`` (the API, the
    user pool, the upload bucket), never framed. The template's response headers policy sends the same
    directives (``tests/unit/test_dashboard_policy.py`` holds them together)."""
    return "; ".join(
        [
            "default-src 'self'",
            "script-src 'self'",
            "style-src 'self'",
            "img-src 'self' data:",
            "connect-src " + " ".join(["'self'", *connect_to]),
            "object-src 'none'",
            "base-uri 'none'",
            "form-action 'self'",
            "frame-ancestors 'none'",
        ]
    )


class DashboardServer:
    """Serves ``dashboard/`` and ``/config.json``; ``/`` is the sign-in page. Every answer carries the
    Content-Security-Policy allowing calls to ``connect_to`` (origins) besides the dashboard's own."""

    def __init__(self, config: dict[str, str], connect_to: Iterable[str] = ()) -> None:
        self._config = json.dumps(config)
        self.policy = content_security_policy(connect_to)
        self._files = SharedDataMiddleware(self._dynamic, {"/": str(DASHBOARD_DIR)}, cache=False)
        self._server: BaseWSGIServer | None = None
        self.url = ""

    def _dynamic(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        request = Request(environ)
        if request.path == "/config.json":
            response = Response(self._config, content_type="application/json")
            response.headers["Cache-Control"] = "no-store"
        elif request.path == "/":
            response = Response(status=302, headers={"Location": "/index.html"})
        else:
            response = Response("Not Found", status=404, content_type="text/plain")
        return response(environ, start_response)

    def _static(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        def with_policy(status: str, headers: list[tuple[str, str]], *rest: Any) -> Any:
            headers.append(("Content-Security-Policy", self.policy))
            headers.append(("X-Content-Type-Options", "nosniff"))
            return start_response(status, headers, *rest)

        return self._files(environ, with_policy)

    def start(self, host: str, port: int) -> str:
        self._server = make_server(host, port, self._static, threaded=True)
        threading.Thread(target=self._server.serve_forever, name="local-dashboard", daemon=True).start()
        self.url = f"http://{host}:{self._server.server_port}"
        return self.url

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
