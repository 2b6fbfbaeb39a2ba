"""POST /platform-ads/activations: accept an audience and activate it in the background (JWT)."""

from shared import wiring
from shared.api import USER_AUTH, create_app, http_entry_point
from shared.audiences.models import AudienceView, CreateAudienceRequest
from shared.idempotency import IdempotencyKeyHeader
from shared.middleware import require_user, user_principal
from shared.observability import tracer

app = create_app()


@app.post(
    "/platform-ads/activations",
    middlewares=[require_user],
    security=USER_AUTH,
    tags=["Audiences"],
    status_code=202,
    response_description="Accepted: the audience is being activated",
)
@tracer.capture_method
def start_activation(
    body: CreateAudienceRequest,
    idempotency_key: IdempotencyKeyHeader = None,
) -> AudienceView:
    """Validate and store the audience, then run creation, batched upload and lookalike in the
    activation state machine. Returns 202 at once; GET /platform-ads/audiences shows the progress."""
    return wiring.audience_service().start_activation(
        user_principal(app).org_id, body, idempotency_key, wiring.activation_starter()
    )


lambda_handler = http_entry_point(app)
