"""Running the sandbox over real HTTP in a background thread."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from types import TracebackType
from typing import Any

from werkzeug.serving import BaseWSGIServer, WSGIRequestHandler, make_server

from platform_sandbox.app import create_app
from platform_sandbox.config import SandboxConfig
from platform_sandbox.state import AdjustableClock, SandboxState

logger = logging.getLogger("platform_sandbox")


class QuietRequestHandler(WSGIRequestHandler):
    """Logs method, path and status only: query strings carry access tokens and must not be logged."""

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        logger.info("%s %s %s", self.command, self.path.split("?", 1)[0], code)


class SandboxServer:
    """The platform sandbox on a local port.

    ``start(port=0)`` picks a free port; ``url`` is then the Graph base URL (paths ``/v25.0/...``)
    and the OAuth dialog base. ``state`` is the live sandbox state for in-process inspection.
    """

    def __init__(
        self,
        config: SandboxConfig | None = None,
        *,
        host: str = "127.0.0.1",
        clock: AdjustableClock | None = None,
    ) -> None:
        self.config = config or SandboxConfig()
        self.host = host
        self.state = SandboxState(self.config, clock)
        self.app = create_app(self.state)
        # Called with (method, path, status) once the sandbox has handled a request, before the
        # answer is sent: a test's fault (the caller's process killed before it read the answer).
        self.answer_hooks: list[Callable[[str, str, int], None]] = []
        self._server: BaseWSGIServer | None = None
        self._thread: threading.Thread | None = None

    def start(self, port: int = 0) -> None:
        """Serve in a daemon thread on ``host:port`` (0 = any free port). Returns once listening."""
        if self._server is not None:
            raise RuntimeError("the sandbox is already running")
        self._server = make_server(
            self.host, port, self._with_hooks, threaded=True, request_handler=QuietRequestHandler
        )
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="platform-sandbox", daemon=True
        )
        self._thread.start()

    def _with_hooks(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if not self.answer_hooks:
            return self.app(environ, start_response)
        status: list[int] = []

        def recording(code: str, headers: Any, *args: Any) -> Any:
            status.append(int(code.split()[0]))
            return start_response(code, headers, *args)

        body = list(self.app(environ, recording))
        for hook in list(self.answer_hooks):
            hook(environ.get("REQUEST_METHOD", ""), environ.get("PATH_INFO", ""), status[0] if status else 0)
        return body

    @property
    def url(self) -> str:
        """``http://host:port`` of the running server."""
        if self._server is None:
            raise RuntimeError("the sandbox is not running; call start() first")
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

    def __enter__(self) -> SandboxServer:
        if self._server is None:
            self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.stop()
