"""POST /platform-ads/audiences: create a Custom Audience of predicted buyers (dashboard, JWT)."""

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.metrics import MetricUnit

from shared import wiring
from shared.api import USER_AUTH, create_app, http_entry_point
from shared.audiences.models import AudienceCreated, CreateAudienceRequest
from shared.idempotency import (
    IdempotencyKeyHeader,
    IdempotencyScope,
    idempotent,
    register_context,
    scope_for,
)
from shared.middleware import require_user, user_principal
from shared.observability import metrics, tracer

app = create_app()


def _seconds_left() -> float:
    return float(app.lambda_context.get_remaining_time_in_millis()) / 1000


def _create(*, scope: IdempotencyScope, body: CreateAudienceRequest) -> AudienceCreated:
    return wiring.audience_service().create(
        scope.org_id,
        body,
        idempotency_key=scope.key,
        seconds_left=_seconds_left,
        hand_off=wiring.activation_starter(),
        request_id=app.lambda_context.aws_request_id,
    )


@app.post(
    "/platform-ads/audiences",
    middlewares=[require_user],
    security=USER_AUTH,
    tags=["Audiences"],
    status_code=201,
    response_description="Audience created",
    responses={
        201: {"description": "Audience created", "content": {"application/json": {"model": AudienceCreated}}},
        202: {
            "description": "Accepted: the upload continues in the activation state machine (the platform "
            "throttled it, or the list is too large for one request); GET activationUrl (also the "
            "Location header) for its progress",
            "content": {"application/json": {"model": AudienceCreated}},
        },
    },
)
@tracer.capture_method
def create_audience(
    body: CreateAudienceRequest,
    idempotency_key: IdempotencyKeyHeader = None,
) -> Response[AudienceCreated]:
    """Normalise and hash the users' identifiers, create the Custom Audience in the connected ad
    account, upload in batches of at most 10,000 within one session, and for prospecting create the
    lookalike. A CSV snapshot is stored. Waits never outlast the function: what does not fit in this
    request continues in the activation state machine (202, with where to watch it). 429
    (Retry-After) past the organization's limit of activations."""
    org_id = user_principal(app).org_id
    wiring.action_limits().spend(org_id, "activation")
    if idempotency_key:
        created = idempotent(_create)(scope=scope_for(org_id, idempotency_key, body), body=body)
    else:
        created = wiring.audience_service().create(
            org_id,
            body,
            seconds_left=_seconds_left,
            hand_off=wiring.activation_starter(),
            request_id=app.lambda_context.aws_request_id,
        )
    metrics.add_metric(name="AudienceUsersUploaded", unit=MetricUnit.Count, value=created.user_count)
    if created.activation_url is None:
        return Response(status_code=201, content_type="application/json", body=created)
    return Response(
        status_code=202,
        content_type="application/json",
        body=created,
        headers={"Location": created.activation_url},
    )


lambda_handler = http_entry_point(app, on_start=register_context)
