"""POST /platform-ads/audiences/{audienceId}/advert: Publish advert for an audience (dashboard, JWT)."""

from typing import Annotated

from aws_lambda_powertools.event_handler import Response, content_types
from aws_lambda_powertools.event_handler.openapi.params import Path
from aws_lambda_powertools.metrics import MetricUnit

from shared import wiring
from shared.api import USER_AUTH, create_app, http_entry_point
from shared.idempotency import (
    IdempotencyKeyHeader,
    IdempotencyScope,
    idempotent,
    register_context,
    scope_for,
)
from shared.middleware import require_user, user_principal
from shared.observability import metrics, tracer
from shared.publishing.models import PublicationView, PublishAdvertRequest

app = create_app()


def _publish(
    *, scope: IdempotencyScope, body: PublishAdvertRequest, audience_id: str, key: str
) -> PublicationView:
    return wiring.publishing_service().publish(scope.org_id, audience_id, body, idempotency_key=key)


@app.post(
    "/platform-ads/audiences/<audienceId>/advert",
    middlewares=[require_user],
    security=USER_AUTH,
    tags=["Adverts"],
    responses={
        201: {"description": "Advert created: paused, or active when asked"},
        200: {"description": "Dry run: what would be created, validated against the ad account"},
    },
)
@tracer.capture_method
def publish_advert(
    audienceId: Annotated[str, Path(description="The service's audience id.")],  # noqa: N803
    body: PublishAdvertRequest,
    idempotency_key: IdempotencyKeyHeader = None,
) -> Response[PublicationView]:
    """Create a Sales campaign, a purchase-optimised ad set on the ad account's pixel targeting the
    audience (its lookalike for prospecting), a link creative and the ad, all paused, then activate
    them if asked. A failure deletes what was created, or lists on the audience what could not be
    deleted. With dryRun: validate against the ad account and return what would be created."""
    org_id = user_principal(app).org_id
    service = wiring.publishing_service()
    if body.dry_run:
        return _json(200, service.dry_run(org_id, audienceId, body))
    if idempotency_key:
        scope = scope_for(org_id, f"{audienceId}/{idempotency_key}", body)
        published: PublicationView = idempotent(_publish, PublicationView)(
            scope=scope, body=body, audience_id=audienceId, key=idempotency_key
        )
    else:
        published = service.publish(org_id, audienceId, body)
    metrics.add_metric(name="AdvertsPublished", unit=MetricUnit.Count, value=1)
    return _json(201, published)


def _json(status: int, view: PublicationView) -> Response[PublicationView]:
    return Response(status_code=status, content_type=content_types.APPLICATION_JSON, body=view)


lambda_handler = http_entry_point(app, on_start=register_context)
