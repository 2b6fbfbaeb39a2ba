"""GET /checkout/{orgId}/{productId} (and its /paid and /cancelled pages): the hosted quick-pay
checkout's public pages, for shoppers (no credentials)."""

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.types import OpenAPIResponse

from shared import wiring
from shared.api import create_app, http_entry_point
from shared.observability import tracer
from shared.payments.checkout import PageAnswer
from shared.payments.pages import SECURITY_HEADERS

app = create_app()

# Every answer is an HTML page (scripts/openapi.py documents them so).
PAGES: dict[int, OpenAPIResponse] = {
    200: {"description": "The page"},
    404: {"description": "A page saying the product is not sold here, or the shop takes no card payments"},
}


def html(answer: PageAnswer) -> Response[str]:
    return Response(
        status_code=answer.status,
        content_type="text/html; charset=utf-8",
        body=answer.html or "",
        headers=dict(SECURITY_HEADERS),
    )


@app.get("/checkout/<orgId>/<productId>", tags=["Checkout"], responses=PAGES)
@tracer.capture_method
def product(orgId: str, productId: str) -> Response[str]:  # noqa: N803 (the route's own names)
    """The product's page: name and price from the organization's synced products file, a quantity
    (``?quantity=``, 1-99; 1 otherwise), and Continue to secure payment. An unknown product (or
    another organization's), one without a price, or an organization that takes no card payments
    gets a page saying so."""
    # Read as given, not validated by the route: a quantity the page cannot use shows 1, never an error.
    quantity = app.current_event.get_query_string_value("quantity")
    return html(wiring.checkout_pages().product_page(orgId, productId, quantity))


@app.get("/checkout/<orgId>/<productId>/paid", tags=["Checkout"], responses=PAGES)
@tracer.capture_method
def paid(orgId: str, productId: str) -> Response[str]:  # noqa: N803
    """Where the provider's page sends the shopper after paying: thanks (the order itself is made
    from the provider's webhook)."""
    return html(wiring.checkout_pages().paid_page(orgId, productId))


@app.get("/checkout/<orgId>/<productId>/cancelled", tags=["Checkout"], responses=PAGES)
@tracer.capture_method
def cancelled(orgId: str, productId: str) -> Response[str]:  # noqa: N803
    """Where the provider's page sends a shopper who leaves without paying: nothing was charged,
    and the way back to the product."""
    return html(wiring.checkout_pages().cancelled_page(orgId, productId))


lambda_handler = http_entry_point(app)
