"""GET /platform-ads/readiness: the wizard's checklist of what the platform would refuse (JWT)."""

from typing import Annotated, Literal

from aws_lambda_powertools.event_handler.openapi.params import Query

from shared import wiring
from shared.api import USER_AUTH, create_app, http_entry_point
from shared.middleware import require_user, user_principal
from shared.observability import tracer
from shared.readiness.service import Readiness, ReadinessQuery

app = create_app()


@app.get("/platform-ads/readiness", middlewares=[require_user], security=USER_AUTH, tags=["Readiness"])
@tracer.capture_method
def get_readiness(
    objective: Annotated[Literal["retargeting", "prospecting"], Query()] = "retargeting",
    lookalike_country: Annotated[
        Literal["GB", "US", "CA", "AU"] | None,
        Query(alias="lookalikeCountry", description="Prospecting: count seed users in this country."),
    ] = None,
    model_name: Annotated[
        str, Query(alias="modelName", min_length=1, max_length=128, description="The model to target with.")
    ] = "shop-purchase",
    publish: Annotated[bool, Query(description="Also check what Publish advert needs.")] = False,
    countries: Annotated[
        str | None,
        Query(
            pattern="^[A-Z]{2}(,[A-Z]{2})*$",
            description="Publish advert: the delivery countries, comma-separated (beneficiary and payer "
            "are needed for the EU, the UK and Australia).",
        ),
    ] = None,
) -> Readiness:
    """Each item passes, fails (with the evidence and the remedy) or is unknown (an earlier item
    failed): the connection, token and scopes; the ad account's business, your role, the Custom
    Audience terms; a model trained on the current data; enough users with a usable identifier; and
    with publish=true the pixel, payment method, beneficiary and payer, and the application's live
    mode. Creates nothing."""
    query = ReadinessQuery(
        objective=objective,
        lookalike_country=lookalike_country,
        model_name=model_name,
        publish=publish,
        countries=tuple(countries.split(",")) if countries else (),
    )
    return wiring.readiness_service().check(user_principal(app).org_id, query)


lambda_handler = http_entry_point(app)
