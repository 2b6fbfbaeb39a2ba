"""GET /payments/status: the card-payment account and whether the hosted checkout can take payments
(dashboard, JWT)."""

from shared import wiring
from shared.api import USER_AUTH, create_app, http_entry_point
from shared.middleware import require_user, user_principal
from shared.observability import tracer
from shared.payments.connection import PaymentsStatusView

app = create_app()


@app.get("/payments/status", middlewares=[require_user], security=USER_AUTH, tags=["Payments"])
@tracer.capture_method
def status() -> PaymentsStatusView:
    """Whether a payments account is connected, whether it takes card payments (charges enabled) and,
    when not, what the provider still needs."""
    return wiring.payments_connection_status().status(user_principal(app).org_id)


lambda_handler = http_entry_point(app)
