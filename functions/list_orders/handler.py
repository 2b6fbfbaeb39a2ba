"""GET /payments/orders: the orders the hosted checkout took, and the checkouts that ended unpaid
(dashboard, JWT)."""

from shared import wiring
from shared.api import USER_AUTH, create_app, http_entry_point
from shared.middleware import require_user, user_principal
from shared.observability import tracer
from shared.payments.orders import OrdersView

app = create_app()


@app.get("/payments/orders", middlewares=[require_user], security=USER_AUTH, tags=["Payments"])
@tracer.capture_method
def orders() -> OrdersView:
    """The newest orders paid through the hosted checkout (product, quantity, amount, when), and the
    checkouts that expired or whose payment failed, with the cards refused on them."""
    return wiring.payments_orders().view(user_principal(app).org_id)


lambda_handler = http_entry_point(app)
