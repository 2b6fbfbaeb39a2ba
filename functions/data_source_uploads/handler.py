"""POST /platform-ads/data-source/uploads: upload links for a shop's three files (dashboard, JWT)."""

from shared import wiring
from shared.api import USER_AUTH, create_app, http_entry_point
from shared.datasources.models import UploadLinks, UploadLinksRequest
from shared.middleware import require_user, user_principal
from shared.observability import tracer

app = create_app()


@app.post(
    "/platform-ads/data-source/uploads",
    middlewares=[require_user],
    security=USER_AUTH,
    tags=["Data source"],
    status_code=201,
)
@tracer.capture_method
def create_data_source_uploads(body: UploadLinksRequest) -> UploadLinks:
    """15-minute presigned PUT links for the customers, products and orders files (CSV or JSON
    Lines), with each file's columns. PUT the files, then POST /platform-ads/data-source/sync."""
    return wiring.data_source_service().upload_links(user_principal(app).org_id, body)


lambda_handler = http_entry_point(app)
