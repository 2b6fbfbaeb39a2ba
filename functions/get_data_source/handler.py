"""GET /platform-ads/data-source: the dataset in force, its versions, syncs and training (JWT)."""

from shared import wiring
from shared.api import USER_AUTH, create_app, http_entry_point
from shared.datasources.models import DataSourceView
from shared.middleware import require_user, user_principal
from shared.observability import tracer

app = create_app()


@app.get(
    "/platform-ads/data-source",
    middlewares=[require_user],
    security=USER_AUTH,
    tags=["Data source"],
)
@tracer.capture_method
def get_data_source() -> DataSourceView:
    """The current dataset version (row counts, rejected rows, both models' training state), every
    version, and the latest syncs with their rejection reports."""
    return wiring.data_source_service().view(user_principal(app).org_id)


lambda_handler = http_entry_point(app)
