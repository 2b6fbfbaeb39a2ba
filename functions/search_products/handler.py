"""GET /platform-ads/data-source/products: the synced catalog searched by product id and name (JWT)."""

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Query

from shared import wiring
from shared.api import USER_AUTH, create_app, http_entry_point
from shared.datasources.models import ProductSearchView
from shared.middleware import require_user, user_principal
from shared.observability import tracer

app = create_app()


@app.get(
    "/platform-ads/data-source/products",
    middlewares=[require_user],
    security=USER_AUTH,
    tags=["Data source"],
)
@tracer.capture_method
def search_products(
    search: Annotated[
        str, Query(max_length=200, description="Text in the product's id or name (case ignored); empty: any.")
    ] = "",
    limit: Annotated[int, Query(ge=1, le=50, description="At most this many products.")] = 20,
) -> ProductSearchView:
    """The products of the dataset in force whose id or name contains the search text, best first
    (the exact id, then ids and names that start with it, then any that contain it), at most limit,
    with how many match in all."""
    return wiring.data_source_service().search_products(user_principal(app).org_id, search, limit)


lambda_handler = http_entry_point(app)
