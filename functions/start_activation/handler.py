"""POST /platform-ads/activations: accept an audience and activate it in the background (JWT)."""

from shared import wiring
from shared.api import USER_AUTH, create_app, http_entry_point
from shared.audiences.models import ActivationRequest, AudienceView
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
    response_description="Accepted: the audience is being activated; GET activationUrl for its progress",
)
@tracer.capture_method
def start_activation(
    body: ActivationRequest,
    idempotency_key: IdempotencyKeyHeader = None,
) -> AudienceView:
    """Validate and store the audience, then run the activation state machine: select the users,
    normalise and hash, create the Custom Audience, upload the batches, wait for the platform to
    process the seed, create the lookalike, publish the advert or generate the campaign if asked, and
    mark it active. Returns 202 at once. A repeat with the same Idempotency-Key and body returns the
    audience; when its activation failed, it starts a new attempt that resumes where it stopped.
    429 (Retry-After) past the organization's limit of activations."""
    org_id = user_principal(app).org_id
    wiring.action_limits().spend(org_id, "activation")
    return wiring.audience_service().start_activation(
        org_id, body, idempotency_key, wiring.activation_starter()
    )


lambda_handler = http_entry_point(app)
