"""Running the sandbox over real HTTP in a background thread."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

from platform_sandbox.app import create_app
from platform_sandbox.config import SandboxConfig
from platform_sandbox.state import SandboxState
from sandbox_kit.clock import AdjustableClock
from sandbox_kit.server import LocalServer

logger = logging.getLogger("platform_sandbox")


class SandboxServer(LocalServer):
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
        self.state = SandboxState(self.config, clock)
        self.app = create_app(self.state)
        # Called with (method, path, status) once the sandbox has handled a request, before the
        # answer is sent: a test's fault (the caller's process killed before it read the answer).
        self.answer_hooks: list[Callable[[str, str, int], None]] = []
        super().__init__(
            self._with_hooks, host=host, name="sandbox", thread_name="platform-sandbox", logger=logger
        )

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
