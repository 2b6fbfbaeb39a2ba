"""DELETE /platform-ads/audiences/{audienceId}/advert: delete an audience's advert (dashboard, JWT)."""

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Path, Query

from shared import wiring
from shared.api import USER_AUTH, create_app, http_entry_point
from shared.middleware import require_user, user_principal
from shared.observability import tracer

app = create_app()


@app.delete(
    "/platform-ads/audiences/<audienceId>/advert",
    middlewares=[require_user],
    security=USER_AUTH,
    tags=["Adverts"],
    responses={204: {"description": "Deleted from the platform and the service"}},
)
@tracer.capture_method
def delete_advert(
    audienceId: Annotated[str, Path(description="The service's audience id.")],  # noqa: N803
    confirm: Annotated[bool, Query(description="Must be true: deletion cannot be undone.")] = False,
) -> Response[None]:
    """Delete the audience's ad, creative, ad set and campaign on the platform (whatever state the
    advert is in), then forget them. Irreversible. What cannot be deleted stays listed."""
    wiring.publishing_without_checkout().delete_advert(
        user_principal(app).org_id, audienceId, confirm=confirm
    )
    return Response(status_code=204)


lambda_handler = http_entry_point(app)
