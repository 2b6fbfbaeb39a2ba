"""GET /platform-ads/audiences/{audienceId}/ads-manager-link: Generate campaign with audience (JWT)."""

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Path

from shared import wiring
from shared.api import USER_AUTH, create_app, http_entry_point
from shared.middleware import require_user, user_principal
from shared.observability import tracer
from shared.publishing.models import AdsManagerLink

app = create_app()


@app.get(
    "/platform-ads/audiences/<audienceId>/ads-manager-link",
    middlewares=[require_user],
    security=USER_AUTH,
    tags=["Adverts"],
)
@tracer.capture_method
def ads_manager_link(
    audienceId: Annotated[str, Path(description="The service's audience id.")],  # noqa: N803
) -> AdsManagerLink:
    """The platform's ads manager on the connected ad account with the audience (and its lookalike)
    selected, to build the ad there. Creates nothing, so it works while the service's application is
    in development mode, when Publish advert cannot."""
    return wiring.publishing_without_checkout().ads_manager_link(user_principal(app).org_id, audienceId)


lambda_handler = http_entry_point(app)
