"""Serving a sandbox's WSGI app over real HTTP on a local port, in a background thread."""

from __future__ import annotations

import logging
import threading
from types import TracebackType
from typing import TYPE_CHECKING, Self

from werkzeug.serving import BaseWSGIServer, WSGIRequestHandler, make_server

if TYPE_CHECKING:
    from _typeshed.wsgi import WSGIApplication


def quiet_request_handler(logger: logging.Logger) -> type[WSGIRequestHandler]:
    """A request handler that logs method, path and status only, to ``logger``: query strings carry
    access tokens and must not be logged."""

    class QuietRequestHandler(WSGIRequestHandler):
        def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
            logger.info("%s %s %s", self.command, self.path.split("?", 1)[0], code)

    return QuietRequestHandler


class LocalServer:
    """``app`` on a local port: ``start(port=0)`` picks a free port, ``url`` is then its base URL.

    ``name`` says which sandbox in errors ("the payments sandbox is not running"), ``thread_name``
    names the serving thread and ``logger`` gets one line a request.
    """

    def __init__(
        self, app: WSGIApplication, *, host: str, name: str, thread_name: str, logger: logging.Logger
    ) -> None:
        self.host = host
        self._app = app
        self._name = name
        self._thread_name = thread_name
        self._handler = quiet_request_handler(logger)
        self._server: BaseWSGIServer | None = None
        self._thread: threading.Thread | None = None

    def start(self, port: int = 0) -> None:
        """Serve in a daemon thread on ``host:port`` (0 = any free port). Returns once listening."""
        if self._server is not None:
            raise RuntimeError(f"the {self._name} is already running")
        self._server = make_server(self.host, port, self._app, threaded=True, request_handler=self._handler)
        self._thread = threading.Thread(
            target=self._server.serve_forever, name=self._thread_name, daemon=True
        )
        self._thread.start()

    @property
    def url(self) -> str:
        """``http://host:port`` of the running server."""
        if self._server is None:
            raise RuntimeError(f"the {self._name} is not running; call start() first")
        return f"http://{self.host}:{self._server.server_port}"

    def stop(self) -> None:
        """Stop serving and free the port; safe to call twice."""
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join()
        self._server, self._thread = None, None

    def __enter__(self) -> Self:
        if self._server is None:
            self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.stop()


def serve_until_interrupted(server: LocalServer) -> None:
    """``python -m <sandbox>``: let the started ``server`` serve until Ctrl-C, then stop it."""
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
