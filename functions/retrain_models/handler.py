"""POST /dashboard/models/retrain: retrain both models on the data in force (dashboard JWT)."""

from shared import wiring
from shared.api import USER_AUTH, create_app, http_entry_point
from shared.datasources.models import SyncView
from shared.middleware import require_user, user_principal
from shared.observability import tracer

app = create_app()


@app.post(
    "/dashboard/models/retrain",
    middlewares=[require_user],
    security=USER_AUTH,
    tags=["Models"],
    status_code=202,
    response_description="Accepted: the current data is synced again and both models train on it",
    responses={
        202: {"description": "Accepted: the current data is synced again and both models train on it"},
        409: {
            "description": "A sync or training is under way (wait for it, then retrain), or the data in "
            "force is data its training refused (too short a history, too few orders): retraining it would "
            "refuse it again, so sync newer files",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}},
        },
    },
)
@tracer.capture_method
def retrain_models() -> SyncView:
    """Sync the current dataset's files again (same rows, same horizon) and train both models on the
    new version; GET /dashboard/models shows the training. 409 while a training is under way or when
    the data in force is data its training refused, 429 (Retry-After) past the organization's limit of
    retrains."""
    org_id = user_principal(app).org_id
    wiring.action_limits().spend(org_id, "retrain")
    return wiring.data_source_service().retrain(org_id, wiring.sync_starter())


lambda_handler = http_entry_point(app)
