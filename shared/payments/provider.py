"""The card-payment provider's API: the only module that talks to it (docs/payments-notes.md).

It builds the provider's official client (``stripe.StripeClient``) with the platform's secret key,
an API version pinned here, and the connected account passed per call, always from the service's
own record (never from a browser). Every create carries an idempotency key the caller built from
the operation and a record it saved first, so a retry (the SDK's own, after a lost answer, or the
caller's) makes nothing twice (docs/payments-notes.md §5).

Each attempt's timeout comes from ``timeout`` (the time the invocation has left, less a reserve), and
the SDK retries only while a retry's wait and a short attempt still fit. The provider's errors come
out as the service's: ``PaymentsUnavailable`` (retry later), ``PaymentsAccountRefused`` (the
merchant's account no longer lets the service act for it) and ``PaymentsRejected`` (the provider
refused what was asked; a defect or a configuration to fix).

Webhook deliveries are verified here too, on the raw body, with the SDK's own verifier.

The SDK (about 30 MB, 0.7 s to import) is imported when a client is built or a delivery verified, not
when this module is: the functions that only read the records (the status, the checkout page) import
the payments package without it, and do not carry its layer (``PaymentsLayer``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from shared.errors import PreconditionFailed, ServiceError, UpstreamError

if TYPE_CHECKING:
    import stripe

# The API version every call (and the webhook endpoint an operator registers) uses: the one the pinned
# SDK was generated for, so its objects and the provider's answers agree. Moving it is a deliberate
# change, with the SDK (tests/unit/payments/test_provider.py holds the two together).
API_VERSION = "2026-10-28.endive"
# A retry is made only when this much is left for its attempt after its wait.
SHORTEST_ATTEMPT_SECONDS = 1.0
# How old a signed delivery may be (the SDK's default; docs/payments-notes.md §4.2).
SIGNATURE_TOLERANCE_SECONDS = 300


class PaymentsUnavailable(ServiceError):
    """The provider could not be reached, or answered that it failed or is busy: try again later."""

    status = 503
    code = "payments_unavailable"
    # Every 503 says when to come back (the service's contract, docs/service-contract.md §7).
    retry_after_seconds = 5.0


class PaymentsAccountRefused(PreconditionFailed):
    """The merchant's account refused the service (disconnected the platform, or closed)."""

    code = "payments_account_refused"


class PaymentsRejected(UpstreamError):
    """The provider refused the request itself."""

    code = "payments_rejected"


class SignatureRefused(Exception):
    """A webhook delivery whose signature or timestamp does not verify. ``reason`` never quotes the
    body."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class ProviderAccount:
    """What the service reads of a connected account."""

    account_id: str
    charges_enabled: bool
    payouts_enabled: bool
    details_submitted: bool
    currently_due: list[str]
    disabled_reason: str | None
    business_name: str | None
    country: str | None
    default_currency: str | None


@dataclass(frozen=True)
class OnboardingLink:
    url: str
    expires_at: datetime


@dataclass(frozen=True)
class CheckoutLine:
    """The one product of a checkout, priced by the service (never by the browser)."""

    name: str
    unit_amount: int
    currency: str
    quantity: int


@dataclass(frozen=True)
class ProviderSession:
    session_id: str
    url: str | None
    status: str
    expires_at: datetime


@dataclass(frozen=True)
class ProviderCharge:
    """What the service reads of a Charge: its PaymentIntent, and the metadata the intent gave it
    (docs/payments-notes.md §4.4), which names the service's organization and checkout."""

    charge_id: str
    payment_intent: str | None
    metadata: dict[str, str]


def _bounded_http_client(timeout: Callable[[], float]) -> stripe.HTTPXClient:
    """The SDK's httpx client with each attempt's timeout asked of ``timeout`` when it is made, and
    no retry whose wait and a short attempt would not fit in what is left."""
    import stripe

    class BoundedHttpClient(stripe.HTTPXClient):
        def __init__(self) -> None:
            super().__init__(timeout=timeout(), allow_sync_methods=True)

        def _get_request_args_kwargs(
            self, method: str, url: str, headers: Mapping[str, str], post_data: Any
        ) -> list[Any]:
            self._timeout = max(timeout(), 0.001)
            args: list[Any] = super()._get_request_args_kwargs(method, url, headers, post_data)
            # The SDK hands httpx its encoded form as ``data``, which httpx reads as raw content
            # but warns about: give it as ``content``, what it is.
            options = args[1]
            if isinstance(options.get("data"), str | bytes):
                options["content"] = options.pop("data")
            return args

        def _should_retry(
            self,
            response: Any,
            api_connection_error: Any,
            num_retries: int,
            max_network_retries: int | None,
        ) -> bool:
            if not super()._should_retry(response, api_connection_error, num_retries, max_network_retries):
                return False
            longest_wait = min(self.INITIAL_DELAY * 2**num_retries, self.MAX_DELAY)
            return timeout() >= longest_wait + SHORTEST_ATTEMPT_SECONDS

    return BoundedHttpClient()


class PaymentsProvider:
    """The provider's API for the platform (the service's own account) and its connected accounts."""

    def __init__(
        self,
        secret_key: str,
        *,
        api_url: str,
        timeout: Callable[[], float],
        max_retries: int = 2,
    ) -> None:
        import stripe

        self._client = stripe.StripeClient(
            secret_key,
            stripe_version=API_VERSION,
            base_addresses={"api": api_url, "connect": api_url},
            max_network_retries=max_retries,
            http_client=_bounded_http_client(timeout),
        )

    # --- connected accounts ------------------------------------------------------------------------

    def create_account(self, *, metadata: dict[str, str], idempotency_key: str) -> ProviderAccount:
        """A new connected account for a merchant to onboard on the provider's own pages (a standard
        account: the merchant's own, with the provider's dashboard)."""
        with _mapped_errors():
            account = self._client.v1.accounts.create(
                {"type": "standard", "metadata": metadata},
                options={"idempotency_key": idempotency_key},
            )
        return _account(account)

    def retrieve_account(self, account_id: str) -> ProviderAccount:
        """The connected account as the provider has it now. ``PaymentsAccountRefused`` when it no
        longer lets the service act for it, or no longer exists (deleted)."""
        import stripe

        with _mapped_errors():
            try:
                return _account(self._client.v1.accounts.retrieve(account_id))
            except stripe.InvalidRequestError as error:
                if error.code != "resource_missing":
                    raise
        raise PaymentsAccountRefused(
            "The payments account no longer exists at the payment provider.",
            remedy="Connect a payments account again.",
        )

    def onboarding_link(
        self, account_id: str, *, refresh_url: str, return_url: str, idempotency_key: str
    ) -> OnboardingLink:
        """A single-use link to the provider's onboarding pages for ``account_id``, which come back to
        ``return_url`` (finished or not) or, when the link expired or was used, ``refresh_url``."""
        with _mapped_errors():
            link = self._client.v1.account_links.create(
                {
                    "account": account_id,
                    "type": "account_onboarding",
                    "refresh_url": refresh_url,
                    "return_url": return_url,
                },
                options={"idempotency_key": idempotency_key},
            )
        return OnboardingLink(url=link.url, expires_at=datetime.fromtimestamp(link.expires_at, UTC))

    # --- checkout ---------------------------------------------------------------------------------

    def create_session(
        self,
        account_id: str,
        *,
        line: CheckoutLine,
        success_url: str,
        cancel_url: str,
        reference: str,
        metadata: dict[str, str],
        idempotency_key: str,
    ) -> ProviderSession:
        """A hosted Checkout Session for one product, created on the connected account (a direct
        charge: the merchant is paid, the platform takes no fee). ``success_url`` may hold
        ``{CHECKOUT_SESSION_ID}``; ``metadata`` goes on the session and on its payment, so every event
        about either names the checkout."""
        params: Any = {
            "mode": "payment",
            "line_items": [
                {
                    "price_data": {
                        "currency": line.currency,
                        "unit_amount": line.unit_amount,
                        "product_data": {"name": line.name},
                    },
                    "quantity": line.quantity,
                }
            ],
            "success_url": success_url,
            "cancel_url": cancel_url,
            "client_reference_id": reference,
            "metadata": metadata,
            "payment_intent_data": {"metadata": metadata},
        }
        with _mapped_errors():
            session = self._client.v1.checkout.sessions.create(
                params, options={"stripe_account": account_id, "idempotency_key": idempotency_key}
            )
        return _session(session)

    def expire_session(self, account_id: str, session_id: str) -> ProviderSession | None:
        """Expire an open session so it can no longer be paid; None when it was no longer open."""
        import stripe

        with _mapped_errors():
            try:
                return _session(
                    self._client.v1.checkout.sessions.expire(
                        session_id, options={"stripe_account": account_id}
                    )
                )
            except stripe.InvalidRequestError as error:
                if error.http_status in (400, 404):
                    return None
                raise

    # --- charges ----------------------------------------------------------------------------------

    def retrieve_charge(self, account_id: str, charge_id: str) -> ProviderCharge | None:
        """The charge ``charge_id`` of the connected account ``account_id``; None when the account has
        no such charge."""
        import stripe

        with _mapped_errors():
            try:
                charge = self._client.v1.charges.retrieve(
                    charge_id, options={"stripe_account": account_id}
                ).to_dict()
            except stripe.InvalidRequestError as error:
                if error.code != "resource_missing":
                    raise
                return None
        metadata = charge.get("metadata") or {}
        intent = charge.get("payment_intent")
        return ProviderCharge(
            charge_id=str(charge["id"]),
            payment_intent=intent if isinstance(intent, str) else None,
            metadata={str(key): str(value) for key, value in metadata.items()},
        )


def verify_delivery(
    payload: bytes, header: str | None, secret: str, *, tolerance: int = SIGNATURE_TOLERANCE_SECONDS
) -> dict[str, Any]:
    """The event a webhook delivery carries, once its ``Stripe-Signature`` verifies against the raw
    ``payload`` with the endpoint's ``secret`` and is no older than ``tolerance`` seconds (a time in
    the future is accepted, as the SDK accepts it). Raises ``SignatureRefused`` otherwise, and
    always while no signing secret is configured: an HMAC under an empty key is anyone's to forge."""
    import stripe

    if not secret:
        raise SignatureRefused("no webhook signing secret is configured")
    try:
        # The SDK decodes the body as UTF-8 first, and its UnicodeDecodeError was a 500 (the fuzzer
        # found it); the provider sends JSON, always UTF-8.
        payload.decode("utf-8")
    except UnicodeDecodeError:
        raise SignatureRefused("the body is not UTF-8 text") from None
    try:
        stripe.WebhookSignature.verify_header(payload, header, secret, tolerance)
    except stripe.SignatureVerificationError as error:
        # The SDK's message names the problem; its other arguments hold the body, never kept.
        raise SignatureRefused(str(error.user_message or "signature verification failed")) from None
    try:
        event: dict[str, Any] = json.loads(payload)
    except ValueError:
        raise SignatureRefused("the signed body is not JSON") from None
    if not isinstance(event, dict):
        raise SignatureRefused("the signed body is not an event")
    return event


@contextmanager
def _mapped_errors() -> Iterator[None]:
    """The provider's errors as the service's (see the module docstring)."""
    import stripe

    try:
        yield
    except stripe.PermissionError:
        raise PaymentsAccountRefused(
            "The payments account no longer lets this service take payments for it.",
            remedy="Connect the payments account again from the dashboard's Payments page.",
        ) from None
    except stripe.AuthenticationError:
        raise PaymentsRejected(
            "The payment provider refused the service's key.",
            remedy="The operator must put the provider's secret key in the payments secret.",
        ) from None
    except (stripe.RateLimitError, stripe.APIConnectionError, stripe.APIError):
        raise PaymentsUnavailable(
            "The payment provider is not answering right now.", remedy="Try again in a minute."
        ) from None
    except stripe.StripeError as error:
        reason = error.user_message or error.code or "no reason given"
        raise PaymentsRejected(
            f"The payment provider refused the request: {reason}", remedy="Report this message to support."
        ) from None


def _account(resource: Any) -> ProviderAccount:
    account = resource.to_dict()
    requirements = account.get("requirements") or {}
    profile = account.get("business_profile") or {}
    return ProviderAccount(
        account_id=str(account["id"]),
        charges_enabled=bool(account.get("charges_enabled")),
        payouts_enabled=bool(account.get("payouts_enabled")),
        details_submitted=bool(account.get("details_submitted")),
        currently_due=[str(item) for item in (requirements.get("currently_due") or [])],
        disabled_reason=requirements.get("disabled_reason"),
        business_name=profile.get("name"),
        country=account.get("country"),
        default_currency=account.get("default_currency"),
    )


def _session(resource: Any) -> ProviderSession:
    session = resource.to_dict()
    return ProviderSession(
        session_id=str(session["id"]),
        url=session.get("url"),
        status=str(session.get("status")),
        expires_at=datetime.fromtimestamp(int(session.get("expires_at")), UTC),
    )
