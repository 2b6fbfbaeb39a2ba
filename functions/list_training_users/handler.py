"""GET /client/models/{modelName}/users: page through a model's training users (API key)."""

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Path, Query

from shared import wiring
from shared.api import API_KEY_AUTH, create_app, http_entry_point
from shared.middleware import api_key_principal, require_api_key
from shared.observability import tracer
from shared.predictions.catalog import TrainingUsers, list_training_users

app = create_app()


@app.get(
    "/client/models/<modelName>/users",
    middlewares=[require_api_key],
    security=API_KEY_AUTH,
    tags=["Prediction"],
)
@tracer.capture_method
def training_users(
    modelName: Annotated[str, Path(min_length=1, max_length=128)],  # noqa: N803
    cursor: Annotated[str | None, Query(max_length=64)] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> TrainingUsers:
    """The user ids the model can score (the valid input.user_id values), a page at a time."""
    return list_training_users(
        api_key_principal(app).org_id,
        modelName,
        cursor=cursor,
        limit=limit,
        models=wiring.model_store(),
        blobs=wiring.artifact_blobs(),
    )


lambda_handler = http_entry_point(app)
