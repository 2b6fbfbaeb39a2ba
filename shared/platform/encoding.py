"""How values travel to the Graph API: form encoding, ``appsecret_proof``, ids and log redaction."""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

# Parameter names whose values are secrets (or single-use credentials) and never reach a log.
SECRET_PARAMS: frozenset[str] = frozenset(
    {"access_token", "appsecret_proof", "client_secret", "fb_exchange_token", "code", "input_token"}
)
REDACTED = "[REDACTED]"

AD_ACCOUNT_PREFIX = "act_"


def appsecret_proof(app_secret: str, access_token: str) -> str:
    """Hex HMAC-SHA256 of the access token keyed with the app secret (docs/platform-notes.md §1.6)."""
    return hmac.new(app_secret.encode(), access_token.encode(), hashlib.sha256).hexdigest()


def encode_value(value: Any) -> str:
    """One parameter value as the Graph API expects it in a form or query string.

    Nested values (dicts, lists, tuples) and booleans are JSON-encoded, compact with sorted keys, as
    the official SDK does: ``targeting``, ``payload``, ``session`` and friends must arrive as JSON
    strings. Strings pass through unchanged; numbers use their plain text form.
    """
    if isinstance(value, str):
        return value
    if isinstance(value, bool | dict | list | tuple):
        return json.dumps(value, sort_keys=True, separators=(",", ":"))
    return str(value)


def encode_params(params: Mapping[str, Any] | None) -> dict[str, str]:
    """Encode every value with ``encode_value``; ``None`` values are left out (the field is unset)."""
    return {key: encode_value(value) for key, value in (params or {}).items() if value is not None}


def ad_account_node(ad_account_id: str | int) -> str:
    """The Graph node of an ad account, ``act_<id>``, whether or not the caller included the prefix.

    Every ad-account edge needs the prefix; a bare id answers "Unsupported get request".
    """
    bare = str(ad_account_id).strip().removeprefix(AD_ACCOUNT_PREFIX)
    if not bare.isdigit():
        raise ValueError(f"Not an ad account id: {ad_account_id!r}")
    return f"{AD_ACCOUNT_PREFIX}{bare}"


def redact_params(params: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``params`` safe to log: secret values replaced by a marker."""
    return {key: (REDACTED if key in SECRET_PARAMS else value) for key, value in params.items()}


def redact_url(url: str) -> str:
    """``url`` with secret query values replaced by a marker (paging links carry access tokens)."""
    parts = urlsplit(url)
    if not parts.query:
        return url
    query = urlencode(redact_params(dict(parse_qsl(parts.query, keep_blank_values=True))), safe="[]")
    return urlunsplit(parts._replace(query=query))


def strip_params(url: str, names: frozenset[str]) -> str:
    """``url`` without the query parameters in ``names``, the others kept in order."""
    parts = urlsplit(url)
    kept = [(key, value) for key, value in parse_qsl(parts.query, keep_blank_values=True) if key not in names]
    return urlunsplit(parts._replace(query=urlencode(kept)))
