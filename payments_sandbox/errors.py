"""The provider's error envelope and the errors the sandbox answers with (docs/payments-notes.md §6).

Every error is ``{"error": {"type", "message", "code"?, "param"?, "decline_code"?, "doc_url"?}}`` with
the HTTP status the official SDK maps to its exception classes: 400/404 ``InvalidRequestError``
(``IdempotencyError`` for type ``idempotency_error``), 401 ``AuthenticationError``, 402 ``CardError``,
403 ``PermissionError``, 429 ``RateLimitError``, anything else ``APIError``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

DOCS = "https://stripe.com/docs"


@dataclass
class PaymentsError(Exception):
    """An error answered as the provider's envelope with ``http_status``."""

    http_status: int
    type: str
    message: str
    code: str | None = None
    param: str | None = None
    decline_code: str | None = None
    # Extra members of the error object (e.g. the payment_intent of a card error).
    extra: dict[str, Any] = field(default_factory=dict)
    # Extra response headers (e.g. Stripe-Should-Retry).
    headers: dict[str, str] = field(default_factory=dict)

    def envelope(self) -> dict[str, Any]:
        """The JSON body of this error."""
        body: dict[str, Any] = {}
        if self.code is not None:
            body["code"] = self.code
        if self.decline_code is not None:
            body["decline_code"] = self.decline_code
        if self.code is not None:
            body["doc_url"] = f"{DOCS}/error-codes/{self.code.replace('_', '-')}"
        body["message"] = self.message
        if self.param is not None:
            body["param"] = self.param
        body.update(self.extra)
        body["type"] = self.type
        return {"error": body}

    @property
    def is_validation(self) -> bool:
        """Whether the request was refused before the endpoint began executing: such answers are
        not saved under an idempotency key, so the caller may retry with the same key
        (docs/payments-notes.md §5)."""
        return 400 <= self.http_status < 500 and self.http_status != 402


def invalid_request(message: str, *, param: str | None = None, code: str | None = None) -> PaymentsError:
    return PaymentsError(400, "invalid_request_error", message, code=code, param=param)


# Authentication ----------------------------------------------------------------------------------


def no_api_key() -> PaymentsError:
    return PaymentsError(
        401,
        "invalid_request_error",
        "You did not provide an API key. You need to provide your API key in the Authorization header, "
        "using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY').",
    )


def invalid_api_key(key: str) -> PaymentsError:
    return PaymentsError(
        401, "invalid_request_error", f"Invalid API Key provided: {redact_key(key)}", code="api_key_invalid"
    )


def account_invalid(key: str, account_id: str) -> PaymentsError:
    """403: the ``Stripe-Account`` header names an account this platform has no access to."""
    return PaymentsError(
        403,
        "invalid_request_error",
        f"The provided key '{redact_key(key)}' does not have access to account '{account_id}' "
        "(or that account does not exist). Application access may have been revoked.",
        code="account_invalid",
    )


def redact_key(key: str) -> str:
    """``sk_test_********abcd``: the form the provider echoes a key in."""
    prefix = "sk_test_" if key.startswith("sk_test_") else key[:3]
    return f"{prefix}{'*' * 8}{key[-4:]}" if len(key) > len(prefix) + 4 else f"{prefix}****"


# Paths and resources -----------------------------------------------------------------------------


def unrecognized_url(method: str, path: str) -> PaymentsError:
    return PaymentsError(
        404,
        "invalid_request_error",
        f"Unrecognized request URL ({method}: {path}). Please see {DOCS} or we can help at "
        "https://support.stripe.com/.",
    )


def resource_missing(kind: str, object_id: str, param: str) -> PaymentsError:
    """404 ``resource_missing``: ``No such checkout.session: 'cs_test_...'``."""
    return PaymentsError(
        404, "invalid_request_error", f"No such {kind}: '{object_id}'", code="resource_missing", param=param
    )


# Parameters --------------------------------------------------------------------------------------


def parameter_missing(param: str) -> PaymentsError:
    return invalid_request(f"Missing required param: {param}.", param=param, code="parameter_missing")


def parameter_unknown(param: str) -> PaymentsError:
    return invalid_request(
        f"Received unknown parameter: {param}. (The payments sandbox speaks a subset of the API: "
        "docs/payments-notes.md lists it.)",
        param=param,
        code="parameter_unknown",
    )


def parameter_invalid_integer(param: str, value: str) -> PaymentsError:
    return invalid_request(f"Invalid integer: {value}", param=param, code="parameter_invalid_integer")


def parameter_invalid_empty(param: str) -> PaymentsError:
    return invalid_request(
        f"You passed an empty string for '{param}'. We assume empty values are an attempt to unset a "
        f"parameter; however '{param}' cannot be unset. You should remove '{param}' from your request or "
        "supply a non-empty value.",
        param=param,
        code="parameter_invalid_empty",
    )


def invalid_choice(param: str, value: str, choices: list[str]) -> PaymentsError:
    listed = ", ".join(choices[:-1]) + f", or {choices[-1]}" if len(choices) > 1 else choices[0]
    return invalid_request(f"Invalid {param}: must be one of {listed}", param=param)


# Idempotency (docs/payments-notes.md §5) ---------------------------------------------------------


def idempotency_mismatch(key: str) -> PaymentsError:
    return PaymentsError(
        400,
        "idempotency_error",
        "Keys for idempotent requests can only be used with the same parameters they were first used "
        f"with. Try using a key other than '{key}' if you meant to execute a different request.",
    )


def idempotency_key_in_use(key: str) -> PaymentsError:
    """409: another request with this key is executing right now (the SDK retries 409)."""
    return PaymentsError(
        409,
        "invalid_request_error",
        f"There is currently another in-progress request using this Idempotency-Key ('{key}'); "
        "please try again later.",
        code="idempotency_key_in_use",
    )


def idempotency_key_too_long(limit: int) -> PaymentsError:
    return invalid_request(
        f"Idempotency-Key header is too long: it may be at most {limit} characters.",
        param="Idempotency-Key",
    )


# Throttling and server errors --------------------------------------------------------------------


def rate_limited() -> PaymentsError:
    return PaymentsError(
        429,
        "invalid_request_error",
        "Request rate limit exceeded. Learn more about rate limits here https://stripe.com/docs/rate-limits.",
        code="rate_limit",
    )


def api_error(message: str | None = None, status: int = 500) -> PaymentsError:
    return PaymentsError(
        status,
        "api_error",
        message or "An unknown error occurred while processing your request. Please retry.",
    )
