"""POST /platform-ads/audiences/{audienceId}/refresh: replace an audience's members with a new list,
or sync a segment audience now (JWT)."""

from typing import Annotated

from aws_lambda_powertools.event_handler import Response, content_types
from aws_lambda_powertools.event_handler.openapi.params import Body, Path

from shared import wiring
from shared.api import USER_AUTH, create_app, http_entry_point
from shared.audiences.models import AudienceCreated, AudienceView, RefreshAudienceRequest
from shared.middleware import require_user, user_principal
from shared.observability import tracer

app = create_app()


@app.post(
    "/platform-ads/audiences/<audienceId>/refresh",
    middlewares=[require_user],
    security=USER_AUTH,
    tags=["Audiences"],
    responses={
        200: {
            "description": "Members replaced with the given users",
            "content": {"application/json": {"model": AudienceCreated}},
        },
        202: {
            "description": "Sync started (refresh now of a segment audience): `sync.current` shows it",
            "content": {"application/json": {"model": AudienceView}},
        },
    },
)
@tracer.capture_method
def refresh(
    audienceId: Annotated[str, Path()],  # noqa: N803
    body: Annotated[RefreshAudienceRequest | None, Body()] = None,
) -> Response[AudienceCreated | AudienceView]:
    """With users: replace the audience's members with them through the platform's usersreplace, in
    batches of at most 10,000 within one replace session; the CSV snapshot is replaced too (an empty
    list is refused, 400). Without users (or without a body), for an audience made from a segment:
    refresh now, i.e. re-score the segment with the model's current version and replace the members
    in the background (202)."""
    org_id = user_principal(app).org_id
    if body is not None and body.replaces_members():
        created = wiring.audience_service().refresh(org_id, audienceId, body)
        return Response(status_code=200, content_type=content_types.APPLICATION_JSON, body=created)
    started = wiring.audience_sync_service().sync_now(org_id, audienceId)
    return Response(status_code=202, content_type=content_types.APPLICATION_JSON, body=started)


lambda_handler = http_entry_point(app)
