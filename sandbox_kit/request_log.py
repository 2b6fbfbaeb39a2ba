"""The log of the requests a sandbox answered, which tests read through ``GET /_admin/requests``."""

from __future__ import annotations

import re
from collections import deque
from typing import Any


class RequestLog:
    """Entries oldest first, each numbered (``seq``) from 1; past ``size`` entries the oldest fall off.

    Callers strip secrets from an entry before they record it.
    """

    def __init__(self, size: int) -> None:
        self._entries: deque[dict[str, Any]] = deque(maxlen=size)
        self._seq = 0

    def record(self, entry: dict[str, Any]) -> None:
        """Append one request, numbering it."""
        self._seq += 1
        self._entries.append({"seq": self._seq, **entry})

    def clear(self) -> None:
        """Forget every entry; the numbering goes on."""
        self._entries.clear()

    def matching(
        self, path: str | None = None, method: str | None = None, **fields: str | None
    ) -> list[dict[str, Any]]:
        """The entries whose ``path`` the regex ``path`` is found in, whose ``method`` is ``method`` (in
        any case) and whose every other field named equals its value; a filter of None passes all."""
        return [
            entry
            for entry in self._entries
            if (path is None or re.search(path, entry["path"]))
            and (method is None or entry["method"] == method.upper())
            and all(value is None or entry[name] == value for name, value in fields.items())
        ]
