"""Reading the Graph error envelope and classifying it by code and subcode."""

from __future__ import annotations

import pytest

from shared.errors import ServiceError
from shared.platform.errors import (
    AppDomainNotAllowed,
    AudienceUnavailable,
    AudienceUpdateFailed,
    BeneficiaryRequired,
    BusinessAccountRequired,
    CustomAudienceTermsNotAccepted,
    DevelopmentModeCreative,
    DevelopmentModePermissions,
    GraphErrorDetail,
    LookalikeRejected,
    LookalikesExist,
    PaymentMethodRequired,
    PlatformError,
    PlatformRequestFailed,
    PlatformThrottled,
    PromotedObjectMissing,
    ReconnectRequired,
    classify,
    read_error,
)
from tests.unit.platform.fake_graph import graph_error


def detail(code: int, subcode: int | None = None, message: str = "platform says") -> GraphErrorDetail:
    return GraphErrorDetail(http_status=400, message=message, code=code, subcode=subcode, fbtrace_id="TRACE")


@pytest.mark.parametrize(
    ("code", "subcode", "expected"),
    [
        (200, 1870050, BusinessAccountRequired),
        (200, 1870090, CustomAudienceTermsNotAccepted),
        (200, 1870034, CustomAudienceTermsNotAccepted),
        (2663, None, CustomAudienceTermsNotAccepted),
        (2664, None, CustomAudienceTermsNotAccepted),
        (10, None, DevelopmentModePermissions),
        (200, None, DevelopmentModePermissions),
        (270, None, DevelopmentModePermissions),
        (294, None, DevelopmentModePermissions),
        (100, 1359188, PaymentMethodRequired),
        (100, 3858079, BeneficiaryRequired),
        (100, 3858081, BeneficiaryRequired),
        (100, 3858152, BeneficiaryRequired),
        (100, 1885183, DevelopmentModeCreative),
        (100, 1349193, PromotedObjectMissing),
        (191, None, AppDomainNotAllowed),
        (190, 458, ReconnectRequired),
        (190, 460, ReconnectRequired),
        (190, 463, ReconnectRequired),
        (190, 467, ReconnectRequired),
        (190, None, ReconnectRequired),
        (80004, 2446079, PlatformThrottled),
        (1487366, None, AudienceUnavailable),
        (1487301, None, AudienceUnavailable),
        (2654, None, LookalikeRejected),
        (2656, None, LookalikesExist),
        (2650, 1870145, AudienceUpdateFailed),
        (2650, 1870158, AudienceUpdateFailed),
        (100, None, PlatformRequestFailed),
    ],
)
def test_errors_are_classified_by_code_and_subcode(
    code: int, subcode: int | None, expected: type[PlatformError]
) -> None:
    # Given
    platform_error = detail(code, subcode)
    # When
    error = classify(platform_error)
    # Then
    assert type(error) is expected
    assert isinstance(error, ServiceError)


def test_classification_ignores_the_platform_message() -> None:
    # Given: the same code with a message that sounds like another error
    misleading = detail(2656, message="Custom Audience terms not accepted")
    # When
    error = classify(misleading)
    # Then
    assert isinstance(error, LookalikesExist)


def test_a_typed_error_shows_the_spec_text_and_keeps_the_platform_message_for_support() -> None:
    # Given
    platform_error = detail(200, 1870090, message="(#200) To create or edit audience, agree to the terms.")
    # When
    error = classify(platform_error)
    # Then
    assert error.message == "Custom Audience terms not accepted."
    assert error.remedy == "Accept the platform's Custom Audience terms for the ad account, then retry."
    assert error.platform_message == "(#200) To create or edit audience, agree to the terms."
    assert error.fbtrace_id == "TRACE"
    assert error.details == {"platform_code": 200, "platform_subcode": 1870090, "fbtrace_id": "TRACE"}


def test_typed_errors_keep_the_status_of_their_domain_class() -> None:
    # Given / When
    business = classify(detail(200, 1870050))
    permissions = classify(detail(10))
    lookalikes = classify(detail(2656))
    # Then
    assert (business.status, business.code) == (422, "platform_business_account_required")
    assert permissions.status == 403
    assert lookalikes.status == 409


def test_a_generic_error_asks_to_report_the_exact_platform_message() -> None:
    # Given
    platform_error = detail(100, 33, message="(#100) Unsupported post request.")
    # When
    error = classify(platform_error)
    # Then
    assert error.message == "The advertising platform rejected the request: (#100) Unsupported post request."
    assert error.remedy == "Report this exact message to support (reference TRACE)."
    assert error.status == 502


def test_the_envelope_fields_are_read() -> None:
    # Given
    body = graph_error(
        100,
        1885183,
        error_user_title="Ads creative post was created by an app that is in development mode",
        error_user_msg="It must be in public to create this ad.",
        fbtrace_id="ABC",
        is_transient=False,
    )
    # When
    parsed = read_error(400, body)
    # Then
    assert parsed == GraphErrorDetail(
        http_status=400,
        message="(#100) Simulated error",
        code=100,
        subcode=1885183,
        type="OAuthException",
        user_title="Ads creative post was created by an app that is in development mode",
        user_message="It must be in public to create this ad.",
        fbtrace_id="ABC",
        is_transient=False,
    )


def test_a_non_json_body_is_an_error_without_a_code() -> None:
    # Given / When
    parsed = read_error(502, None, fbtrace_header="HDR")
    # Then
    assert parsed is not None
    assert (parsed.code, parsed.http_status, parsed.fbtrace_id) == (None, 502, "HDR")


def test_success_false_is_an_error() -> None:
    # Given / When
    parsed = read_error(200, {"success": False})
    # Then
    assert parsed is not None
    assert parsed.code is None


def test_a_successful_body_is_not_an_error() -> None:
    # Given / When / Then
    assert read_error(200, {"success": True}) is None
    assert read_error(200, {"id": "1"}) is None
