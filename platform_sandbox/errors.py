"""The Graph error envelope and the catalogue of errors the sandbox returns (docs/platform-notes.md §7).

Clients must classify errors by ``code`` / ``error_subcode`` (docs/platform-notes.md §7.1), so every
error here carries the code and subcode the real platform uses; messages follow the observed bodies.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Any


def new_trace_id() -> str:
    """A random ``fbtrace_id`` like the platform's (opaque, 11 characters)."""
    return secrets.token_urlsafe(8)[:11]


@dataclass
class GraphError(Exception):
    """An error returned as ``{"error": {...}}`` with an HTTP status (400 unless said otherwise)."""

    message: str
    code: int
    subcode: int | None = None
    type: str = "OAuthException"
    user_title: str | None = None
    user_msg: str | None = None
    is_transient: bool = False
    http_status: int = 400
    error_data: dict[str, Any] | None = None
    # Extra response headers, e.g. the usage header of a throttled call.
    headers: dict[str, str] = field(default_factory=dict)

    def envelope(self, trace_id: str) -> dict[str, Any]:
        """The JSON body of this error, shaped like Meta's envelope (docs/platform-notes.md §7.1)."""
        body: dict[str, Any] = {
            "message": self.message,
            "type": self.type,
            "code": self.code,
            "is_transient": self.is_transient,
            "fbtrace_id": trace_id,
        }
        if self.subcode is not None:
            body["error_subcode"] = self.subcode
        if self.user_title is not None:
            body["error_user_title"] = self.user_title
        if self.user_msg is not None:
            body["error_user_msg"] = self.user_msg
        if self.error_data is not None:
            body["error_data"] = self.error_data
        return {"error": body}


# Request plumbing -------------------------------------------------------------------------------


def invalid_parameter(message: str, *, subcode: int | None = None, blame: str | None = None) -> GraphError:
    """Code 100: a parameter is missing or malformed."""
    data = {"blame_field_specs": [[blame]]} if blame else None
    return GraphError(f"(#100) {message}", 100, subcode, error_data=data)


def unsupported_request(method: str, object_id: str) -> GraphError:
    """100/33: the object does not exist or the token may not see it (docs/platform-notes.md §3.5)."""
    return GraphError(
        f"Unsupported {method.lower()} request. Object with ID '{object_id}' does not exist, "
        "cannot be loaded due to missing permissions, or does not support this operation.",
        100,
        33,
        type="GraphMethodException",
    )


def nonexisting_field(field_name: str, node_type: str) -> GraphError:
    return invalid_parameter(f"Tried accessing nonexisting field ({field_name}) on node type ({node_type})")


def deprecated_version(version: str) -> GraphError:
    """2635: a version below the accepted range, or none at all (docs/platform-notes.md §9)."""
    return GraphError(
        f"(#2635) You are calling a deprecated version of the Ads API ({version or 'unversioned'}). "
        "Please update to the latest version.",
        2635,
    )


def unknown_version(version: str) -> GraphError:
    return unknown_path([version])


def unknown_path(components: list[str]) -> GraphError:
    """2500: a path the platform has no route for below an object that exists, such as an edge the
    node does not have: ``Unknown path components: /no_such_edge`` (docs/platform-notes.md §5)."""
    return GraphError(f"Unknown path components: /{'/'.join(components)}", 2500)


def too_many_parameters(rows: int, limit: int) -> GraphError:
    """105: more rows than one upload may carry (docs/platform-notes.md §3.4)."""
    return GraphError(
        f"(#105) The number of parameters exceeded the maximum for this operation ({rows} > {limit} rows)",
        105,
    )


def missing_appsecret_proof() -> GraphError:
    return GraphError(
        "API calls from the server require an appsecret_proof argument", 100, type="GraphMethodException"
    )


def invalid_appsecret_proof() -> GraphError:
    return GraphError(
        "Invalid appsecret_proof provided in the API argument", 100, type="GraphMethodException"
    )


# Tokens and OAuth (docs/platform-notes.md §1, §7.2) ---------------------------------------------------------


def token_unparseable() -> GraphError:
    return GraphError("Invalid OAuth access token - Cannot parse access token", 190)


def token_expired(expired_at: str, now: str) -> GraphError:
    return GraphError(
        f"Error validating access token: Session has expired on {expired_at}. The current time is {now}.",
        190,
        463,
    )


REVOCATION_MESSAGES: dict[int, str] = {
    458: "Error validating access token: The user has not authorized application {app_id}.",
    460: (
        "Error validating access token: The session has been invalidated because the user changed their "
        "password or Facebook has changed the session for security reasons."
    ),
    467: "Error validating access token: The access token is invalid.",
}


def token_revoked(subcode: int, app_id: str) -> GraphError:
    template = REVOCATION_MESSAGES.get(subcode, REVOCATION_MESSAGES[467])
    return GraphError(template.format(app_id=app_id), 190, subcode)


def user_token_required() -> GraphError:
    return GraphError(
        "An active access token must be used to query information about the current user.", 2500
    )


def client_secret_invalid() -> GraphError:
    return GraphError("Error validating client secret.", 1)


def client_id_invalid() -> GraphError:
    return GraphError("Error validating application. Invalid application ID.", 101)


def redirect_uri_mismatch() -> GraphError:
    return GraphError(
        "Error validating verification code. Please make sure your redirect_uri is identical to the one you "
        "used in the OAuth dialog request",
        100,
        36008,
    )


def code_used() -> GraphError:
    return GraphError("This authorization code has been used.", 100, 36009)


def code_expired() -> GraphError:
    return GraphError("This authorization code has expired.", 100, 36007)


def code_invalid() -> GraphError:
    return GraphError("Invalid verification code format.", 100)


# Permissions and account gates (docs/platform-notes.md §2.2, §2.3, §7.2) ------------------------------------


def missing_permission(scope: str) -> GraphError:
    """294 for ads_management (docs/platform-notes.md §3.5); 200 for other scopes."""
    if scope == "ads_management":
        return GraphError(
            "(#294) Managing advertisements requires an access token with the extended permission for "
            "ads_management",
            294,
        )
    return GraphError(f"(#200) Requires {scope} permission to access this object", 200)


def app_in_development_mode() -> GraphError:
    return GraphError(
        "(#200) Permissions error",
        200,
        user_title="App in development mode",
        user_msg=(
            "The app is in development mode and this user has no Tester or Admin role on it. "
            "Add the user as a Tester, or make the app live."
        ),
    )


def development_access_level() -> GraphError:
    return GraphError(
        "(#270) This Ads API request is not allowed for apps with development access level (Development "
        "access is by default for all apps, please request for upgrade). Make sure that the access token "
        "belongs to a user that is both admin of the app and admin of the ad account",
        270,
    )


def no_write_permission(account_id: str) -> GraphError:
    return GraphError(
        f"(#200) No write permission for ad account act_{account_id}",
        200,
        1713092,
        user_title="No write permission",
        user_msg="You need the Admin or Advertiser role on this ad account to make changes.",
    )


def business_account_required() -> GraphError:
    return GraphError(
        "(#200) Permissions error",
        200,
        1870050,
        user_title="Business account required",
        user_msg=(
            "Check that the ad account is linked to the Meta Business Suite account. Customer list audiences "
            "can only be created or edited in a business-owned ad account."
        ),
    )


def terms_not_accepted(account_id: str) -> GraphError:
    return GraphError(
        "(#200) Permissions error",
        200,
        1870090,
        user_title="Custom Audience Terms Not Accepted",
        user_msg=(
            "To create or edit audience or ad set, please agree to the Custom Audience terms: "
            f"https://business.facebook.com/ads/manage/customaudiences/tos/?act={account_id}"
        ),
    )


# Custom audiences and uploads (docs/platform-notes.md §2-§4) ------------------------------------------------


def audience_limit_reached(limit: int) -> GraphError:
    return GraphError(
        f"(#2654) Failed to create custom audience: you can create a maximum of {limit} custom audiences",
        2654,
    )


def audience_deleted() -> GraphError:
    return GraphError("Custom Audience Has Been Deleted", 1487366, type="GraphMethodException")


def audience_not_shared(audience_id: str) -> GraphError:
    return GraphError(
        f"Custom Audience Unavailable: The custom audience {audience_id} you are trying to use has not been "
        "shared with your ad account",
        1487301,
        type="GraphMethodException",
    )


def lookalikes_exist() -> GraphError:
    return GraphError("(#2656) Failed to delete custom audience because associated lookalikes exist", 2656)


def seed_too_small(minimum: int) -> GraphError:
    return GraphError(
        "(#2654) Source Audience is Too Small: There aren't enough people in your source in the country you "
        f"chose. Please choose a country that includes at least {minimum} people in your source.",
        2654,
    )


def duplicate_lookalike() -> GraphError:
    return GraphError(
        "(#2654) Can't Create a Duplicate Lookalike: You've already created a lookalike audience with the "
        "same source, country and size.",
        2654,
    )


def value_column_not_allowed() -> GraphError:
    """LOOKALIKE_VALUE sent to an audience not created with ``is_value_based`` (docs/platform-notes.md
    §4.1: no documented code; 100, invalid parameter, is the closest)."""
    return invalid_parameter(
        "LOOKALIKE_VALUE can only be uploaded to a value-based custom audience (created with "
        "is_value_based=1)",
        blame="payload",
    )


def value_column_required() -> GraphError:
    """Members added to a value-based audience without LOOKALIKE_VALUE (docs/platform-notes.md §4.1)."""
    return invalid_parameter(
        "A value-based custom audience needs the LOOKALIKE_VALUE key in payload.schema", blame="payload"
    )


def seed_without_values() -> GraphError:
    """A lookalike of a value-based seed none of whose members carries a value (docs/platform-notes.md
    §4.1: no documented code; 2654, the lookalike-creation failure, is the closest)."""
    return GraphError(
        "(#2654) Source Audience Has No Customer Values: this value-based source audience has no "
        "customer values. Upload its customers with a LOOKALIKE_VALUE (a non-negative number), then "
        "create the lookalike again.",
        2654,
    )


REPLACE_MESSAGES: dict[int, str] = {
    1870145: "Audience Update In Progress: another replace session is running for this audience.",
    1870147: "Invalid Upload Batch for Replace: the first batch of a replace session must have batch_seq 1.",
    1870158: "Replace Session Timed Out: the replace session did not finish within 90 minutes.",
    1870159: "Replace Session Finished: this session already received its last batch.",
}


def replace_failed(subcode: int) -> GraphError:
    """2650 with the replace subcodes of docs/platform-notes.md §3.6."""
    return GraphError(
        "(#2650) Failed to update the custom audience",
        2650,
        subcode,
        user_title=REPLACE_MESSAGES[subcode].split(":")[0],
        user_msg=REPLACE_MESSAGES[subcode],
    )


# Throttling and faults (docs/platform-notes.md §8) ----------------------------------------------------------

THROTTLE_MESSAGES: dict[int, str] = {
    4: "(#4) Application request limit reached",
    17: "(#17) User request limit reached",
    613: "(#613) Calls to this api have exceeded the rate limit.",
    80003: "(#80003) There have been too many calls to this ad-account. Wait a bit and try again.",
    80004: "(#80004) There have been too many calls to this ad-account. Wait a bit and try again.",
}


def throttled(code: int, subcode: int | None, headers: dict[str, str]) -> GraphError:
    message = THROTTLE_MESSAGES.get(code, f"(#{code}) Rate limit reached. Wait a bit and try again.")
    return GraphError(message, code, subcode, headers=headers)


def transient_failure() -> GraphError:
    return GraphError(
        "An unexpected error has occurred. Please retry your request later.",
        2,
        type="OAuthException",
        is_transient=True,
        http_status=500,
    )


# Conversions API (docs/platform-notes.md §11.6) -------------------------------------------------------------


def event_parameter(path: str, problem: str) -> GraphError:
    """100/2804019: one parameter of one event is missing or malformed; the whole request fails.

    ``path`` is the parameter as the platform names it, ``$['data'][0]['event_time']``
    (docs/platform-notes.md §11.6: the shape is observed; the subcode for problems other than a
    missing parameter is our choice)."""
    return GraphError(
        "Invalid parameter",
        100,
        2804019,
        user_title="Server-side API parameter error",
        user_msg=f"The parameter {path} {problem}.",
    )


def event_too_old(index: int, max_age_days: int) -> GraphError:
    """100/2804003: an event older than the window fails the whole request (docs/platform-notes.md §11.3)."""
    return GraphError(
        "Invalid parameter",
        100,
        2804003,
        user_title="Event Timestamp Too Old",
        user_msg=(
            f"The timestamp for this event is too far in the past ($['data'][{index}]['event_time']). "
            f"Events need to be sent from your server within {max_age_days} days of when they occurred. "
            f"Enter a timestamp that has occurred within the last {max_age_days} days."
        ),
    )


def insufficient_customer_information(index: int) -> GraphError:
    """100/2804050: an event without any customer information parameter (docs/platform-notes.md §11.4)."""
    return GraphError(
        "Invalid parameter",
        100,
        2804050,
        user_title="Insufficient customer information parameters",
        user_msg=(
            f"The event $['data'][{index}] has no customer information parameters, or a combination too "
            "broad to be useful for matching. Add parameters such as em, ph or external_id."
        ),
    )


def too_many_events(count: int, limit: int) -> GraphError:
    """More events in one request than the platform takes (docs/platform-notes.md §11.1; the code is our
    choice: the platform documents the limit, not the error)."""
    return invalid_parameter(
        f"A request can carry at most {limit} events in data; this one has {count}", blame="data"
    )
