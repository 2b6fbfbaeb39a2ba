"""POST /checkout/{orgId}/{productId}: the product page's form (``quantity``) starts paying on the
provider's hosted page, for shoppers (no credentials)."""

from aws_lambda_powertools.event_handler import Response

from shared import wiring
from shared.api import create_app, http_entry_point, raw_body, service_url
from shared.observability import tracer
from shared.payments.checkout import checkout_path
from shared.payments.pages import SECURITY_HEADERS

app = create_app()


@app.post(
    "/checkout/<orgId>/<productId>",
    tags=["Checkout"],
    responses={
        303: {"description": "To the provider's hosted payment page (Location)"},
        400: {"description": "The product page again, asking for a quantity from 1 to 99"},
        404: {
            "description": "A page saying the product is not sold here, or the shop takes no card payments"
        },
        503: {"description": "A page saying the payment page could not be opened (nothing was charged)"},
    },
)
@tracer.capture_method
def start(orgId: str, productId: str) -> Response[str]:  # noqa: N803 (the route's own names)
    """Save a checkout, create the provider's Checkout Session on the organization's connected account
    for the catalogue's name and price times the quantity, and send the shopper to its hosted page
    (303). No card data ever reaches the service."""
    page_url = service_url(app) + checkout_path(orgId, productId)
    answer = wiring.checkout_service().start(
        orgId,
        productId,
        # (a body that is not UTF-8 is no form the page sent: its quantity is asked again)
        raw_body(app).decode("utf-8", errors="replace"),
        page_url,
        user_agent=app.current_event.headers.get("user-agent"),
    )
    headers = dict(SECURITY_HEADERS)
    if answer.location is not None:
        headers["Location"] = answer.location
    return Response(
        status_code=answer.status,
        content_type="text/html; charset=utf-8",
        body=answer.html or "",
        headers=headers,
    )


lambda_handler = http_entry_point(app)
