"""POST /platform-ads/audiences: create a Custom Audience of predicted buyers (dashboard, JWT)."""

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


def _create(*, scope: IdempotencyScope, body: CreateAudienceRequest) -> AudienceCreated:
    return wiring.audience_service().create(scope.org_id, body, idempotency_key=scope.key)


@app.post(
    "/platform-ads/audiences",
    middlewares=[require_user],
    security=USER_AUTH,
    tags=["Audiences"],
    status_code=201,
    response_description="Audience created",
)
@tracer.capture_method
def create_audience(
    body: CreateAudienceRequest,
    idempotency_key: IdempotencyKeyHeader = None,
) -> AudienceCreated:
    """Normalise and hash the users' identifiers, create the Custom Audience in the connected ad
    account, upload in batches of at most 10,000 within one session, and for prospecting create the
    lookalike. A CSV snapshot is stored."""
    org_id = user_principal(app).org_id
    if idempotency_key:
        created = idempotent(_create)(scope=scope_for(org_id, idempotency_key, body), body=body)
    else:
        created = wiring.audience_service().create(org_id, body)
    metrics.add_metric(name="AudienceUsersUploaded", unit=MetricUnit.Count, value=created.user_count)
    return created


lambda_handler = http_entry_point(app, on_start=register_context)
