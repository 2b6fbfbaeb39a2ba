"""Reading Graph parameters the way real clients send them (docs/platform-notes.md §3.1, §10 item 2).

A parameter may arrive in the query string, a form body or a JSON body. In query and form
encodings nested values (``payload``, ``session``, ``targeting``, ...) are JSON-encoded strings;
in a JSON body they are plain objects. ``GraphParams`` hides that difference from the handlers.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from flask import Request

from platform_sandbox import errors

SECRET_PARAMS = frozenset(
    {
        "access_token",
        "appsecret_proof",
        "appsecret_time",
        "client_secret",
        "code",
        "fb_exchange_token",
        "input_token",
    }
)
REDACTED = "[redacted]"


class GraphParams:
    """Merged request parameters (JSON body over form over query) with typed accessors.

    Each accessor raises the platform's code-100 error for a missing or malformed value.
    """

    def __init__(self, values: Mapping[str, Any]) -> None:
        self.values = dict(values)

    @classmethod
    def from_request(cls, request: Request) -> GraphParams:
        values: dict[str, Any] = dict(request.args.items())
        values.update(request.form.items())
        body = request.get_json(silent=True) if request.is_json else None
        if isinstance(body, dict):
            values.update(body)
        return cls(values)

    def has(self, name: str) -> bool:
        return self.values.get(name) not in (None, "")

    def text(self, name: str, default: str | None = None) -> str | None:
        value = self.values.get(name)
        if value in (None, ""):
            return default
        return str(value)

    def required_text(self, name: str) -> str:
        value = self.text(name)
        if value is None:
            raise errors.invalid_parameter(f"The parameter {name} is required", blame=name)
        return value

    def json(self, name: str) -> Any:
        """The decoded value of a nested parameter, or None when absent."""
        value = self.values.get(name)
        if isinstance(value, str):
            try:
                return json.loads(value)
            except ValueError as exc:
                raise errors.invalid_parameter(
                    f"Param {name} must be a valid JSON value", blame=name
                ) from exc
        return value

    def json_object(self, name: str, *, required: bool = False) -> dict[str, Any] | None:
        value = self.json(name)
        if value is None and not required:
            return None
        if not isinstance(value, dict):
            raise errors.invalid_parameter(f"Param {name} must be a JSON object", blame=name)
        return value

    def integer(self, name: str) -> int | None:
        value = self.values.get(name)
        if value in (None, ""):
            return None
        if isinstance(value, bool):
            raise errors.invalid_parameter(f"Param {name} must be an integer", blame=name)
        try:
            return int(value)
        except (TypeError, ValueError) as exc:
            raise errors.invalid_parameter(f"Param {name} must be an integer", blame=name) from exc

    def boolean(self, name: str) -> bool | None:
        value = self.values.get(name)
        if value in (None, ""):
            return None
        if isinstance(value, bool):
            return value
        if str(value).lower() in ("true", "1"):
            return True
        if str(value).lower() in ("false", "0"):
            return False
        raise errors.invalid_parameter(f"Param {name} must be a boolean", blame=name)

    def fields(self) -> list[str] | None:
        """Top-level names in ``fields``; a nested selection like ``business{id}`` keeps its name."""
        raw = self.text("fields")
        return None if raw is None else split_fields(raw)

    def redacted(self) -> dict[str, Any]:
        """The parameters fit for the request log: no tokens or secrets, upload rows reduced to a count."""
        safe: dict[str, Any] = {}
        for name, value in self.values.items():
            if name in SECRET_PARAMS:
                safe[name] = REDACTED
            elif name == "payload":
                safe[name] = _summarise_payload(self.json("payload"))
            elif name == "data" and isinstance(value, list | str) and len(value) > 0:
                # Conversions API events (up to 1,000 per call): the pixel's events view holds them.
                safe[name] = _summarise_events(value)
            else:
                safe[name] = value
        return safe


def access_token_of(request: Request, params: GraphParams) -> str | None:
    """The access token from the parameters or an ``Authorization: Bearer``/``OAuth`` header."""
    token = params.text("access_token")
    if token:
        return token
    scheme, _, credentials = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() in ("bearer", "oauth") and credentials.strip():
        return credentials.strip()
    return None


def split_fields(raw: str) -> list[str]:
    """Split ``id,name,business{id,name}`` at top-level commas into ``["id", "name", "business"]``."""
    names: list[str] = []
    depth = 0
    current = ""
    for char in raw:
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        elif char == "," and depth == 0:
            names.append(current)
            current = ""
            continue
        if depth == 0 and char not in "{}":
            current += char
    names.append(current)
    return [name.split(".")[0].strip() for name in names if name.strip()]


def _summarise_events(data: Any) -> Any:
    if isinstance(data, str):
        try:
            data = json.loads(data)
        except ValueError:
            return "<not JSON>"
    return f"<{len(data)} events>" if isinstance(data, list) else data


def _summarise_payload(payload: Any) -> Any:
    # Upload rows are hashed identifiers and can be 10,000 long: the members view holds them.
    if isinstance(payload, dict) and isinstance(payload.get("data"), list):
        return {**payload, "data": f"<{len(payload['data'])} rows>"}
    return payload
