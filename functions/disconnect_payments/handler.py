"""POST /payments/disconnect: stop taking card payments through the hosted checkout (dashboard, JWT)."""

from shared import wiring
from shared.api import USER_AUTH, create_app, http_entry_point
from shared.middleware import require_user, user_principal
from shared.observability import tracer
from shared.payments.connection import PaymentsStatusView

app = create_app()


@app.post("/payments/disconnect", middlewares=[require_user], security=USER_AUTH, tags=["Payments"])
@tracer.capture_method
def disconnect() -> PaymentsStatusView:
    """Expire the checkouts still open (nobody can pay them any more) and mark the connection
    inactive: no checkout starts until the merchant connects again, which resumes the same account.
    The merchant's account stays theirs, with the provider; orders already paid stay listed."""
    return wiring.payments_connection_service().disconnect(user_principal(app).org_id)


lambda_handler = http_entry_point(app)
