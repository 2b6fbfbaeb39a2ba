"""GET /platform-ads/checkout-routes: the checkout routes Publish advert offers (JWT)."""

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Query

from shared import wiring
from shared.api import USER_AUTH, create_app, http_entry_point
from shared.middleware import require_user, user_principal
from shared.observability import tracer
from shared.publishing.models import CheckoutRoutesView

app = create_app()


@app.get("/platform-ads/checkout-routes", middlewares=[require_user], security=USER_AUTH, tags=["Adverts"])
@tracer.capture_method
def checkout_routes(
    productId: Annotated[  # noqa: N803 (the query's own name)
        str | None,
        Query(max_length=200, description="A product: its hosted checkout page is in checkoutUrl."),
    ] = None,
) -> CheckoutRoutesView:
    """The store's product page, and the hosted quick-pay checkout once the organization's payments
    account takes card payments (otherwise why not, and what to do)."""
    return wiring.checkout_routes().settings(user_principal(app).org_id, productId)


lambda_handler = http_entry_point(app)
