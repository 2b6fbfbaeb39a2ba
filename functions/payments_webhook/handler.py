"""POST /payments/webhook: the card-payment provider's event deliveries for the connected accounts
(signed with the endpoint's secret; no other credentials)."""

from pydantic import Field

from shared import wiring
from shared.api import PAYMENTS_SIGNATURE, create_app, http_entry_point, raw_body
from shared.errors import Conflict, ServiceError, Unauthorized
from shared.observability import tracer
from shared.wire_models import CamelModel

app = create_app()


class WebhookReceived(CamelModel):
    received: bool
    outcome: str = Field(
        description="order_recorded, already_paid, expired, failed, refusal_recorded, account_updated, "
        "awaiting_payment, refund_recorded, dispute_recorded, dispute_unchanged (a late or repeated dispute "
        "event), duplicate (a redelivery), ignored (not the service's), ..."
    )


# What each refusal tells the provider, in the service's error body (documented for 401, 409, 500).
REFUSALS: dict[int, tuple[type[ServiceError], str]] = {
    401: (
        Unauthorized,
        "The delivery's Stripe-Signature does not verify (forged, changed, or older than 5 minutes).",
    ),
    409: (Conflict, "Another delivery of this event is being handled: the provider delivers it again."),
    500: (ServiceError, "The event could not be handled: the provider delivers it again."),
}


@app.post(
    "/payments/webhook",
    security=PAYMENTS_SIGNATURE,
    tags=["Payments"],
    responses={
        200: {
            "description": "Received: handled, or acknowledged and ignored (a redelivery, "
            "or an event that is not the service's)"
        }
    },
)
@tracer.capture_method
def webhook() -> WebhookReceived:
    """Verify the delivery's signature on the raw body, handle each event id once, and turn a paid
    Checkout Session into an order of its organization (then a Purchase to the pixel); expired and
    failed sessions and refused cards are recorded, and so are refunds and disputes of its orders.
    Register this URL with the provider for connected accounts' events (README, "Card payments")."""
    signature = app.current_event.headers.get("stripe-signature")
    answer = wiring.payments_webhook().handle(raw_body(app), signature)
    if answer.status != 200:
        error, message = REFUSALS[answer.status]
        raise error(message)
    return WebhookReceived(received=True, outcome=answer.outcome)


lambda_handler = http_entry_point(app)
