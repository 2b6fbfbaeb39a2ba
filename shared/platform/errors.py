"""Platform errors: reading the Graph error envelope and classifying it into typed domain errors.

Classification uses only ``code`` and ``error_subcode``: the platform says its messages may change
(docs/platform-notes.md §7.1). Each typed error derives from a ``shared.errors`` class, so
``shared.api`` maps it to HTTP without knowing the platform, and carries the contract's text
(docs/service-contract.md §7.2) as ``message`` and ``remedy``. The platform's own message and
``fbtrace_id`` stay on the exception for logs and support.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from shared.errors import (
    Conflict,
    Forbidden,
    NotFound,
    OutOfTime,
    PreconditionFailed,
    QuotaExceeded,
    ServiceError,
    UpstreamError,
    ValidationFailed,
)

# Throttling codes (docs/platform-notes.md §8.2): the platform rejected the call before executing it.
THROTTLING_CODES: frozenset[int] = frozenset({4, 17, 32, 341, 613, *range(80000, 80015)})
# Unknown (1) and temporary service (2) errors: worth retrying, but the call may have executed.
TRANSIENT_CODES: frozenset[int] = frozenset({1, 2})


@dataclass(frozen=True)
class GraphErrorDetail:
    """What the platform said about a failed call. ``code`` is None for non-JSON or HTML bodies."""

    http_status: int
    message: str
    code: int | None = None
    subcode: int | None = None
    type: str | None = None
    user_title: str | None = None
    user_message: str | None = None
    fbtrace_id: str | None = None
    is_transient: bool = False

    @property
    def is_throttling(self) -> bool:
        return self.code in THROTTLING_CODES


# Subcodes of an access token the platform no longer accepts (docs/platform-notes.md §7.2).
TOKEN_REJECTED_SUBCODES = frozenset({458, 459, 460, 463, 464, 467})


def rejects_token(detail: GraphErrorDetail) -> bool:
    """Whether the platform refused the call's access token itself (190, 102, or a token subcode),
    rather than the request."""
    return detail.code in {102, 190} or detail.subcode in TOKEN_REJECTED_SUBCODES


def read_error(http_status: int, body: Any, fbtrace_header: str | None = None) -> GraphErrorDetail | None:
    """Return the error described by a response, or None when the response is a success.

    ``body`` is the decoded JSON, or None when the body was not JSON (an HTML gateway page, say).
    Beyond the ``{"error": {...}}`` envelope, ``{"success": false}`` and non-JSON bodies count as
    failures, as the official SDK treats them.
    """
    if isinstance(body, dict) and "error" in body:
        return _read_envelope(http_status, body["error"], fbtrace_header)
    if body is None:
        return GraphErrorDetail(
            http_status=http_status,
            message=f"The platform answered HTTP {http_status} with a body that is not JSON.",
            fbtrace_id=fbtrace_header,
        )
    if isinstance(body, dict) and body.get("success") is False:
        return GraphErrorDetail(
            http_status=http_status,
            message="The platform reported the request as unsuccessful.",
            fbtrace_id=fbtrace_header,
        )
    if http_status >= 400 or not isinstance(body, dict | bool):
        return GraphErrorDetail(
            http_status=http_status,
            message=f"The platform answered HTTP {http_status} without an error description.",
            fbtrace_id=fbtrace_header,
        )
    return None


def _read_envelope(http_status: int, error: Any, fbtrace_header: str | None) -> GraphErrorDetail:
    if not isinstance(error, dict):
        # Some OAuth endpoints answer {"error": "access_denied"} rather than the object envelope.
        return GraphErrorDetail(http_status=http_status, message=str(error), fbtrace_id=fbtrace_header)
    return GraphErrorDetail(
        http_status=http_status,
        message=str(error.get("message") or "The platform reported an error without a message."),
        code=_as_int(error.get("code")),
        subcode=_as_int(error.get("error_subcode")),
        type=_as_str(error.get("type")),
        user_title=_as_str(error.get("error_user_title")),
        user_message=_as_str(error.get("error_user_msg")),
        fbtrace_id=_as_str(error.get("fbtrace_id")) or fbtrace_header,
        is_transient=error.get("is_transient") is True,
    )


def _as_int(value: Any) -> int | None:
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def _as_str(value: Any) -> str | None:
    return str(value) if value is not None else None


def object_gone(error: PlatformError) -> bool:
    """Whether the platform says the object no longer exists: 100/33 (it does not exist or cannot be
    seen, docs/platform-notes.md §3.5) or 1487366 (the Custom Audience has been deleted)."""
    detail = error.detail
    return detail is not None and ((detail.code, detail.subcode) == (100, 33) or detail.code == 1487366)


# --- Typed errors -------------------------------------------------------------------------------
# Each class adds the platform context to one ``shared.errors`` class. ``PlatformError`` defines
# no ``status`` so the domain base class decides it (MRO: leaf -> PlatformError -> domain class).


class PlatformError(ServiceError):
    """Any failure of the advertising platform, with its own message and trace id for support."""

    def __init__(
        self,
        message: str,
        *,
        remedy: str | None = None,
        detail: GraphErrorDetail | None = None,
        details: dict[str, Any] | None = None,
        retry_after_seconds: float | None = None,
    ) -> None:
        support: dict[str, Any] = {}
        if detail is not None:
            # Codes and trace id help support; the platform's message may quote ids, so it is kept
            # on the exception (``platform_message``) rather than in the client-facing details.
            support = {"platform_code": detail.code, "platform_subcode": detail.subcode}
            if detail.fbtrace_id:
                support["fbtrace_id"] = detail.fbtrace_id
        super().__init__(
            message,
            remedy=remedy,
            details={**support, **(details or {})},
            retry_after_seconds=retry_after_seconds,
        )
        self.detail = detail

    @property
    def platform_message(self) -> str | None:
        return self.detail.message if self.detail else None

    @property
    def fbtrace_id(self) -> str | None:
        return self.detail.fbtrace_id if self.detail else None


class BusinessAccountRequired(PlatformError, PreconditionFailed):
    code = "platform_business_account_required"


class CustomAudienceTermsNotAccepted(PlatformError, PreconditionFailed):
    code = "platform_terms_not_accepted"


class DevelopmentModePermissions(PlatformError, Forbidden):
    code = "platform_permissions"


class NoAdAccounts(PlatformError, PreconditionFailed):
    code = "platform_no_ad_accounts"


class PaymentMethodRequired(PlatformError, PreconditionFailed):
    code = "platform_payment_method_required"


class BeneficiaryRequired(PlatformError, PreconditionFailed):
    code = "platform_beneficiary_required"


class DevelopmentModeCreative(PlatformError, PreconditionFailed):
    code = "platform_app_in_development_mode"


class PixelNotFound(PlatformError, PreconditionFailed):
    code = "platform_pixel_not_found"


class PromotedObjectMissing(PlatformError, PreconditionFailed):
    code = "platform_promoted_object_missing"


class PageNotPromotable(PlatformError, PreconditionFailed):
    """The advert's Page is no longer one the ad account can promote (it left the business, or the
    connected user lost their role on it): the platform refuses the creative."""

    code = "platform_page_not_promotable"


class AppDomainNotAllowed(PlatformError, UpstreamError):
    """The service's own app configuration (domains, redirect URIs) is wrong: an operator problem."""

    code = "platform_app_domain_not_allowed"


class ReconnectRequired(PlatformError, PreconditionFailed):
    """The stored platform token no longer works. Not 401: that would say the caller's JWT is bad."""

    code = "platform_reconnect_required"


class PlatformThrottled(PlatformError, QuotaExceeded):
    """Still throttled after the client's retries; ``retry_after_seconds`` says when to try again."""

    code = "platform_throttled"

    def __init__(
        self,
        message: str,
        *,
        remedy: str | None = None,
        detail: GraphErrorDetail | None = None,
        retry_after_seconds: float | None = None,
    ) -> None:
        extra = {"retry_after_seconds": retry_after_seconds} if retry_after_seconds is not None else {}
        super().__init__(
            message, remedy=remedy, detail=detail, details=extra, retry_after_seconds=retry_after_seconds
        )


class AudienceUnavailable(PlatformError, NotFound):
    code = "platform_audience_unavailable"


class LookalikeRejected(PlatformError, PreconditionFailed):
    code = "platform_audience_rejected"


class LookalikesExist(PlatformError, Conflict):
    code = "platform_lookalikes_exist"


class AudienceUpdateFailed(PlatformError, Conflict):
    code = "platform_audience_update_failed"


class EventsRefused(PlatformError, ValidationFailed):
    """The platform refused a Conversions API request because of what one of its events says (code 100):
    nothing of the request was kept, and sending it again unchanged fails again
    (docs/platform-notes.md §11.6)."""

    code = "platform_events_refused"


class PlatformUnavailable(PlatformError, UpstreamError):
    """The platform could not be reached or kept failing (network errors, HTTP 5xx)."""

    code = "platform_unavailable"


class PlatformOutOfTime(PlatformUnavailable, OutOfTime):
    """The platform did not answer within the time the invocation had left (``shared.deadline``).

    A ``PlatformUnavailable`` with its code, so the state machines retry it and a create whose
    answer was lost is looked for before it is sent again (``may_have_executed``); answered 503 with
    ``Retry-After`` rather than 502."""

    status = 503
    code = "platform_unavailable"

    def __init__(
        self,
        message: str,
        *,
        remedy: str | None = None,
        detail: GraphErrorDetail | None = None,
        retry_after_seconds: float = 5.0,
    ) -> None:
        super().__init__(message, remedy=remedy, detail=detail, retry_after_seconds=retry_after_seconds)


class PlatformRequestFailed(PlatformError, UpstreamError):
    """Any platform error without a specific rule: the user reports the exact message to support."""

    code = "platform_request_failed"


# --- The code table -----------------------------------------------------------------------------


@dataclass(frozen=True)
class ErrorRule:
    """What a platform code means to the user: the error to raise, its spec text and remedy."""

    error: type[PlatformError]
    message: str
    remedy: str


_RECONNECT = "Reconnect the ad account."
TOKEN_INVALID = ErrorRule(
    ReconnectRequired, "The connection to the advertising platform is no longer valid.", _RECONNECT
)
_PERMISSIONS = ErrorRule(
    DevelopmentModePermissions,
    "Permissions error: the service's application is in development mode or your ad account access is "
    "limited.",
    "Ask the operator to add you as a Tester on the service's application, make sure the ad account is "
    "owned by your business, then reconnect the ad account on the Ad account page.",
)
_TERMS = ErrorRule(
    CustomAudienceTermsNotAccepted,
    "Custom Audience terms not accepted.",
    "Accept the platform's Custom Audience terms for the ad account, then retry.",
)
_BENEFICIARY = ErrorRule(
    BeneficiaryRequired,
    "Enter the person or organisation benefitting from the ads.",
    "Make sure the ad account is owned by a business, or set a default beneficiary and payer in the ad "
    "account's advertising settings.",
)
_AUDIENCE_UPDATE = ErrorRule(
    AudienceUpdateFailed,
    "The platform failed to update the Custom Audience.",
    "Retry later; if it keeps failing, report the exact message to support.",
)
THROTTLED = ErrorRule(
    PlatformThrottled,
    "The advertising platform is rate limiting requests for this ad account.",
    "Wait a few minutes and retry.",
)
UNAVAILABLE = ErrorRule(
    PlatformUnavailable,
    "The advertising platform could not be reached or kept failing.",
    "Retry in a few minutes; if it keeps failing, report the exact message to support.",
)
OUT_OF_TIME = ErrorRule(
    PlatformOutOfTime,
    "The advertising platform did not answer in the time this request had.",
    "Retry after the time in Retry-After; if it keeps happening, the platform is slow: try again later.",
)
NO_AD_ACCOUNTS = ErrorRule(
    NoAdAccounts,
    "No ad accounts found.",
    "Create a business ad account, make sure you have the Admin or Advertiser role on it, wait 5-10 "
    "minutes for it to sync, then reconnect.",
)
BUSINESS_ACCOUNT_REQUIRED = ErrorRule(
    BusinessAccountRequired,
    "Business account needed to create or edit this audience.",
    "Use an ad account owned by a business: disconnect, then reconnect with a business-owned ad account.",
)
APP_DOMAIN_NOT_ALLOWED = ErrorRule(
    AppDomainNotAllowed,
    "Can't load URL: the domain isn't included in the app's domains.",
    "Only the service operator can fix this by updating the application's domains and redirect URIs.",
)
# The OAuth dialog's outcomes that arrive without a Graph error code (docs/platform-notes.md §1.1).
CONNECTION_DECLINED = ErrorRule(
    DevelopmentModePermissions,
    "The connection was not approved on the advertising platform.",
    "Connect again and approve every requested permission. While the service's application is in "
    "development mode, only its Testers and Admins can connect.",
)
CONNECTION_NOT_ACCEPTED = ErrorRule(
    ReconnectRequired,
    "The platform did not accept the new connection.",
    "Connect your ad account from the dashboard.",
)
# Conversions API refusals (docs/platform-notes.md §11.6): one event of the batch is at fault.
EVENTS_REFUSED = ErrorRule(
    EventsRefused,
    "The advertising platform refused the events: one of them is malformed.",
    "Correct or leave out the event the platform names, then send the others again.",
)
EVENT_TOO_OLD = ErrorRule(
    EventsRefused,
    "The advertising platform refused the events: one of them is older than the platform accepts.",
    "Leave out events older than 7 days (62 for in-store purchases), then send the others again.",
)
EVENT_CUSTOMER_INFORMATION = ErrorRule(
    EventsRefused,
    "The advertising platform refused the events: one of them carries too little customer information.",
    "Leave out events without an e-mail, phone or customer id, then send the others again.",
)
PIXEL_NOT_FOUND = ErrorRule(
    PixelNotFound,
    "No pixel found for this ad account.",
    "Link a pixel (dataset) to the same ad account used in the service.",
)

# Keys: (code, subcode). ``None`` as subcode matches any subcode of that code; ``None`` as code
# matches that subcode under any code. Lookup order: exact, subcode only, code only.
ERROR_RULES: Mapping[tuple[int | None, int | None], ErrorRule] = {
    (200, 1870050): BUSINESS_ACCOUNT_REQUIRED,
    (200, 1870090): _TERMS,
    (200, 1870034): _TERMS,
    (2663, None): _TERMS,
    (2664, None): _TERMS,
    (10, None): _PERMISSIONS,
    (200, None): _PERMISSIONS,
    (270, None): _PERMISSIONS,
    (294, None): _PERMISSIONS,
    (2654, 1713092): _PERMISSIONS,  # "No write permission for this ad account"
    (100, 1359188): ErrorRule(
        PaymentMethodRequired,
        "Update payment method: the ad account has no valid payment method.",
        "Add a valid payment method in the platform's billing settings, then retry Publish advert.",
    ),
    (None, 3858079): _BENEFICIARY,
    (None, 3858081): _BENEFICIARY,
    (None, 3858152): _BENEFICIARY,
    (3858152, None): _BENEFICIARY,
    (100, 1885183): ErrorRule(
        DevelopmentModeCreative,
        "Ads creative post was created by an app that is in development mode.",
        "Use Generate campaign with audience and build the ad manually in the platform's ads manager.",
    ),
    (100, 1349193): ErrorRule(
        PromotedObjectMissing,
        "Select a promoted object for your ad set.",
        "Link a pixel (dataset) to the ad account so the conversion campaign has a conversion source.",
    ),
    (191, None): APP_DOMAIN_NOT_ALLOWED,
    (100, 36008): ErrorRule(
        AppDomainNotAllowed,
        "The redirect URI does not match the one used to start the connection.",
        "Only the service operator can fix this by correcting the configured redirect URI.",
    ),
    (100, 36007): ErrorRule(
        ReconnectRequired, "The authorization code has expired.", "Start connecting the ad account again."
    ),
    (100, 36009): ErrorRule(
        ReconnectRequired,
        "The authorization code has already been used.",
        "Start connecting the ad account again.",
    ),
    (102, None): TOKEN_INVALID,
    (190, None): TOKEN_INVALID,
    (190, 458): ErrorRule(
        ReconnectRequired,
        "The service's application is no longer authorised on your platform account.",
        _RECONNECT,
    ),
    (190, 460): ErrorRule(
        ReconnectRequired,
        "The platform session was invalidated (password changed or reset for security reasons).",
        _RECONNECT,
    ),
    (190, 463): ErrorRule(ReconnectRequired, "The platform access token has expired.", _RECONNECT),
    (190, 467): ErrorRule(ReconnectRequired, "The platform access token is invalid.", _RECONNECT),
    **{(code, None): THROTTLED for code in THROTTLING_CODES},
    (1487366, None): ErrorRule(
        AudienceUnavailable,
        "The Custom Audience has been deleted on the platform.",
        "Create the audience again.",
    ),
    (1487301, None): ErrorRule(
        AudienceUnavailable,
        "The Custom Audience is not shared with this ad account.",
        "Share the audience with the connected ad account, or create it again.",
    ),
    (2654, None): ErrorRule(
        LookalikeRejected,
        "The platform could not create the audience: the seed audience is too small in the chosen country, "
        "an identical lookalike already exists, or (a value-based seed) none of the seed's people carries "
        "a customer value.",
        "Use a seed audience with at least 100 matched people in that country, reuse the existing "
        "lookalike with the same seed, country and size, or give a value-based seed's customers their "
        "values (numbers of at least 0).",
    ),
    (2656, None): ErrorRule(
        LookalikesExist,
        "The audience cannot be deleted because lookalike audiences were built from it.",
        "Delete its lookalike audiences first, then delete this audience.",
    ),
    (100, 2804003): EVENT_TOO_OLD,
    (100, 2804019): EVENTS_REFUSED,
    (100, 2804050): EVENT_CUSTOMER_INFORMATION,
    (2650, None): _AUDIENCE_UPDATE,
    (2650, 1870145): ErrorRule(
        AudienceUpdateFailed,
        "Another update of this audience is in progress.",
        "Wait for it to finish, then retry.",
    ),
    (2650, 1870158): ErrorRule(
        AudienceUpdateFailed, "The replace session timed out after 90 minutes.", "Start the replace again."
    ),
    (2650, 1870147): ErrorRule(
        AudienceUpdateFailed,
        "The replace session must start with batch 1.",
        "Start the replace again from the first batch.",
    ),
    (2650, 1870159): ErrorRule(
        AudienceUpdateFailed, "The replace session has already finished.", "Start a new replace session."
    ),
    (2650, 1870144): ErrorRule(
        AudienceUpdateFailed,
        "The audience is too large to replace (100 million people or more).",
        "Add and remove people instead of replacing the audience.",
    ),
}


def rule_for(detail: GraphErrorDetail) -> ErrorRule | None:
    """The rule for an error's code and subcode, or None when no rule applies (a generic error)."""
    for key in ((detail.code, detail.subcode), (None, detail.subcode), (detail.code, None)):
        if None in key and key[0] == key[1]:
            continue
        rule = ERROR_RULES.get(key)
        if rule is not None:
            return rule
    return None


def classify(detail: GraphErrorDetail) -> PlatformError:
    """Turn what the platform said into the typed error to raise (never looking at the message)."""
    rule = rule_for(detail)
    if rule is None:
        return generic_error(detail)
    return build_error(rule, detail)


def build_error(rule: ErrorRule, detail: GraphErrorDetail | None = None) -> PlatformError:
    """The exception a rule describes, carrying the platform's detail when there is one."""
    return rule.error(rule.message, remedy=rule.remedy, detail=detail)


def generic_error(detail: GraphErrorDetail) -> PlatformError:
    """The spec's generic error: the user reports the platform's exact message to support."""
    reference = f" (reference {detail.fbtrace_id})" if detail.fbtrace_id else ""
    return PlatformRequestFailed(
        f"The advertising platform rejected the request: {detail.message}",
        remedy=f"Report this exact message to support{reference}.",
        detail=detail,
    )
