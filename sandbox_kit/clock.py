"""The sandboxes' clock, which the admin API can move forward."""

from __future__ import annotations

import time
from collections.abc import Callable


class AdjustableClock:
    """Wall-clock time plus an offset the admin API can advance (expiry of tokens, sessions, links;
    timeouts and retries)."""

    def __init__(self, source: Callable[[], float] = time.time) -> None:
        self._source = source
        self._offset = 0.0

    def now(self) -> float:
        return self._source() + self._offset

    def advance(self, seconds: float) -> None:
        self._offset += seconds
