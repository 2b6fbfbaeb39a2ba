"""POST /platform-ads/targeting/preview: a predictive segment's size, scores and reach (JWT)."""

from shared import wiring
from shared.api import USER_AUTH, create_app, http_entry_point
from shared.middleware import require_user, user_principal
from shared.observability import tracer
from shared.targeting.models import PreviewRequest, PreviewView

app = create_app()


@app.post(
    "/platform-ads/targeting/preview",
    middlewares=[require_user],
    security=USER_AUTH,
    tags=["Targeting"],
)
@tracer.capture_method
def preview_targeting(body: PreviewRequest) -> PreviewView:
    """Score every user of the model for the product, cut by the rule (top_n, top_percent or
    threshold), and answer with the segment's size, score histogram and cut, identifier coverage
    after normalisation, the prospecting seed in the lookalike country, and warnings (stale or
    outdated model, a segment too small to upload). Creates nothing. 429 (Retry-After) past the
    organization's limit of previews."""
    org_id = user_principal(app).org_id
    wiring.action_limits().spend(org_id, "targeting_preview")
    return wiring.targeting_service().preview(org_id, body)


lambda_handler = http_entry_point(app)
