"""GET and POST /platform-ads/account/closure: close the organization's account, deleting everything
it has, and follow the deletion (JWT)."""

from shared import wiring
from shared.api import USER_AUTH, create_app, http_entry_point
from shared.closure.service import AccountView, CloseAccountRequest
from shared.middleware import require_signed_in, signed_in_user
from shared.observability import tracer

app = create_app()


@app.get(
    "/platform-ads/account/closure", middlewares=[require_signed_in], security=USER_AUTH, tags=["Account"]
)
@tracer.capture_method
def get_account_closure() -> AccountView:
    """The organization's name (what closing asks to type) and its closure, if one was asked for:
    each phase with what it deleted, the error and remedy of a closure that stopped, and once done
    the receipt (kept 7 days, naming no organization)."""
    user = signed_in_user(app)
    return wiring.closure_service().view(user.user_id, user.org_id)


@app.post(
    "/platform-ads/account/closure",
    middlewares=[require_signed_in],
    security=USER_AUTH,
    tags=["Account"],
    status_code=202,
    response_description="Accepted: the organization's data is being deleted",
)
@tracer.capture_method
def close_account(body: CloseAccountRequest) -> AccountView:
    """Close the account: delete every item, file, API key, usage counter, the connection with its
    encrypted token and, with deletePlatformAudiences, the audiences and adverts on the platform.
    Irreversible; confirmed by typing the organization's name. Returns 202 at once and runs in the
    background; asking again resumes a closure that failed or stalled."""
    user = signed_in_user(app)
    return wiring.closure_service().start(user.user_id, user.org_id, body, wiring.closure_starter())


lambda_handler = http_entry_point(app)
