"""GET /dashboard/models: the models page, with freshness, drift and training (dashboard JWT)."""

from shared import wiring
from shared.api import USER_AUTH, create_app, http_entry_point
from shared.clock import utc_now
from shared.middleware import require_user, user_principal
from shared.ml.freshness import FreshnessRules
from shared.observability import tracer
from shared.predictions.model_overview import DashboardModelList, model_overview

app = create_app()


@app.get("/dashboard/models", middlewares=[require_user], security=USER_AUTH, tags=["Models"])
@tracer.capture_method
def list_dashboard_models() -> DashboardModelList:
    """Each model's metrics, age and freshness verdict, measured drift, training users, predictions
    made, and its training on the dataset in force (a retrain under way shows here)."""
    return model_overview(
        user_principal(app).org_id,
        models=wiring.model_store(),
        datasets=wiring.dataset_store(),
        rules=FreshnessRules.from_settings(wiring.settings()),
        now=utc_now(),
    )


lambda_handler = http_entry_point(app)
