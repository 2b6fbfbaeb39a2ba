"""POST /platform-ads/data-source/sync: validate and store a shop's files, then retrain (JWT)."""

from shared import wiring
from shared.api import USER_AUTH, create_app, http_entry_point
from shared.datasources.models import SyncRequest, SyncView
from shared.middleware import require_user, user_principal
from shared.observability import tracer

app = create_app()


@app.post(
    "/platform-ads/data-source/sync",
    middlewares=[require_user],
    security=USER_AUTH,
    tags=["Data source"],
    status_code=202,
    response_description="Accepted: the files are being validated",
)
@tracer.capture_method
def sync_data_source(body: SyncRequest) -> SyncView:
    """Start a sync of uploaded files. Returns 202 at once; GET /platform-ads/data-source shows it move
    to review (rows were rejected: sync again with acceptRejectedRows to keep the good rows), failed
    (a whole file is unusable) or synced, then both models' training."""
    return wiring.data_source_service().start_sync(user_principal(app).org_id, body, wiring.sync_starter())


lambda_handler = http_entry_point(app)
