"""POST /payments/connect: start (or continue) connecting the card-payment account (dashboard, JWT)."""

from shared import wiring
from shared.api import USER_AUTH, create_app, http_entry_point, service_url
from shared.middleware import require_user, user_principal
from shared.observability import tracer
from shared.payments.connection import OnboardingStart

app = create_app()


@app.post("/payments/connect", middlewares=[require_user], security=USER_AUTH, tags=["Payments"])
@tracer.capture_method
def connect() -> OnboardingStart:
    """The payment provider's onboarding page for the organization's account (created on first use),
    as a single-use link. It comes back to the dashboard's payments-callback.html with a state only
    the caller can complete."""
    principal = user_principal(app)
    return wiring.payments_onboarding_service().start(principal.org_id, principal.user_id, service_url(app))


lambda_handler = http_entry_point(app)
