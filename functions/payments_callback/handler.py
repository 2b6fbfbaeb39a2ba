"""POST /payments/connect/callback: back from the provider's onboarding, for the user who started it
(dashboard, JWT).

The provider sends the browser back to the dashboard's ``payments-callback.html`` with the state; the
page posts it here with the signed-in user's JWT. The state must have been issued to that user in that
organization, and works once.
"""

from pydantic import Field

from shared import wiring
from shared.api import USER_AUTH, create_app, http_entry_point
from shared.middleware import require_user, user_principal
from shared.observability import tracer
from shared.payments.connection import PaymentsStatusView
from shared.wire_models import CamelModel

app = create_app()


class PaymentsCallbackRequest(CamelModel):
    state: str = Field(min_length=1, max_length=512, description="The state the onboarding link returned.")


@app.post("/payments/connect/callback", middlewares=[require_user], security=USER_AUTH, tags=["Payments"])
@tracer.capture_method
def callback(request: PaymentsCallbackRequest) -> PaymentsStatusView:
    """Read the account from the provider (coming back is no proof onboarding finished) and record
    where it stands. A state issued to another user or organization is refused with 403, a used or
    expired one with 400; nothing changes then."""
    principal = user_principal(app)
    return wiring.payments_onboarding_service().complete(principal.org_id, principal.user_id, request.state)


lambda_handler = http_entry_point(app)
