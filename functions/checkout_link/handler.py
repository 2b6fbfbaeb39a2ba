"""GET and PUT /platform-ads/checkout-link: the organization's checkout link template (JWT)."""

from shared import wiring
from shared.api import USER_AUTH, create_app, http_entry_point
from shared.middleware import require_user, user_principal
from shared.observability import tracer
from shared.publishing.models import CheckoutLinkChange, CheckoutLinkSettings

app = create_app()


@app.get("/platform-ads/checkout-link", middlewares=[require_user], security=USER_AUTH, tags=["Adverts"])
@tracer.capture_method
def get_checkout_link() -> CheckoutLinkSettings:
    """The checkout link template, the allowed domains, and the checkout routes Publish advert offers
    (only the product page without a template, with the reason)."""
    return wiring.checkout_links().settings(user_principal(app).org_id)


@app.put("/platform-ads/checkout-link", middlewares=[require_user], security=USER_AUTH, tags=["Adverts"])
@tracer.capture_method
def set_checkout_link(body: CheckoutLinkChange) -> CheckoutLinkSettings:
    """Set the checkout link template: an https payment link on an allowed domain with {product_id}
    where the product goes (null removes it)."""
    return wiring.checkout_links().change(user_principal(app).org_id, body.template)


lambda_handler = http_entry_point(app)
