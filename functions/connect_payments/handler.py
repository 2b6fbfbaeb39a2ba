"""POST /payments/connect: start (or continue, or resume) connecting the card-payment account
(dashboard, JWT)."""

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Body

from shared import wiring
from shared.api import USER_AUTH, create_app, http_entry_point, service_url
from shared.middleware import require_user, user_principal
from shared.observability import tracer
from shared.payments.connection import ConnectRequest, OnboardingStart

app = create_app()


@app.post("/payments/connect", middlewares=[require_user], security=USER_AUTH, tags=["Payments"])
@tracer.capture_method
def connect(body: Annotated[ConnectRequest | None, Body()] = None) -> OnboardingStart:
    """The payment provider's onboarding page for the organization's account (created on first use;
    after a disconnect, the same account again unless ``newAccount`` asks for a different one), as a
    single-use link. It comes back to the dashboard's payments-callback.html with a state only the
    caller can complete."""
    principal = user_principal(app)
    new_account = body is not None and body.new_account
    return wiring.payments_onboarding_service().start(
        principal.org_id, principal.user_id, service_url(app), new_account=new_account
    )


lambda_handler = http_entry_point(app)
