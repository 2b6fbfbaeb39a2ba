"""Idempotency keys (docs/payments-notes.md §5).

The first POST with a key that reaches the endpoint has its status and body saved; a later POST
with the same key and the same parameters gets them back (including a 500), and one with other
parameters, or to another path, is an ``idempotency_error``. Requests refused before the endpoint
runs (validation, throttling, a conflict) are not saved. Keys are scoped to the account the call
acts as, may be at most 255 characters, and are pruned once ``idempotency_seconds`` old. GET and
DELETE ignore the header: they are idempotent by definition.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from payments_sandbox import errors

MAX_KEY_LENGTH = 255


@dataclass(frozen=True)
class Saved:
    fingerprint: str
    status: int
    body: dict[str, Any]
    saved_at: float


def fingerprint(method: str, path: str, params: dict[str, Any]) -> str:
    """What must match for a replay: the method, the path and the parameters, whatever their order."""
    canonical = json.dumps([method.upper(), path, params], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


class IdempotencyStore:
    """Saved answers and keys in use, per (account scope, key)."""

    def __init__(self, ttl_seconds: float) -> None:
        self.ttl_seconds = ttl_seconds
        self._saved: dict[tuple[str, str], Saved] = {}
        self._in_use: set[tuple[str, str]] = set()

    @staticmethod
    def check_key(key: str) -> None:
        if len(key) > MAX_KEY_LENGTH:
            raise errors.idempotency_key_too_long(MAX_KEY_LENGTH)

    def lookup(self, scope: str, key: str, print_: str, now: float, *, held: bool = False) -> Saved | None:
        """The saved answer to replay, or None to run the request; raises for a mismatch, or for a key
        in use by another request (``held``: this request is the one holding it)."""
        self._prune(now)
        saved = self._saved.get((scope, key))
        if saved is not None:
            if saved.fingerprint != print_:
                raise errors.idempotency_mismatch(key)
            return saved
        if (scope, key) in self._in_use and not held:
            raise errors.idempotency_key_in_use(key)
        return None

    def claim(self, scope: str, key: str) -> None:
        """Mark the key as in use by a request about to run; ``release`` ends the claim."""
        if (scope, key) in self._in_use:
            raise errors.idempotency_key_in_use(key)
        self._in_use.add((scope, key))

    def release(self, scope: str, key: str) -> None:
        self._in_use.discard((scope, key))

    def in_use(self) -> int:
        """How many keys running requests hold."""
        return len(self._in_use)

    def save(self, scope: str, key: str, saved: Saved) -> None:
        self._saved[(scope, key)] = saved

    def _prune(self, now: float) -> None:
        expired = [item for item, saved in self._saved.items() if now - saved.saved_at >= self.ttl_seconds]
        for item in expired:
            del self._saved[item]

    def __len__(self) -> int:
        return len(self._saved)
