"""The Events page's site section (dashboard JWT): GET and POST /platform-ads/events/site (the shop's
domains and the test event code), POST /platform-ads/events/site/key (create or rotate the site key)
and DELETE /platform-ads/events/site/key (revoke it)."""

from shared import wiring
from shared.api import USER_AUTH, create_app, http_entry_point
from shared.events.sites import SiteSettingsRequest, SiteSettingsView, site_view
from shared.middleware import require_user, user_principal
from shared.observability import logger, tracer

app = create_app()


def _endpoint() -> str:
    return wiring.site_snippet_settings().site_events_url


@app.get("/platform-ads/events/site", middlewares=[require_user], security=USER_AUTH, tags=["Events"])
@tracer.capture_method
def get_site() -> SiteSettingsView:
    """The shop's declared domains, test event code, site key and snippet."""
    return site_view(wiring.event_sites().site(user_principal(app).org_id), _endpoint())


@app.post("/platform-ads/events/site", middlewares=[require_user], security=USER_AUTH, tags=["Events"])
@tracer.capture_method
def save_site(request: SiteSettingsRequest) -> SiteSettingsView:
    """Declare the domains the shop's pages are served from (only their pages may send events) and
    the test event code; the site key in force follows at once."""
    site = wiring.event_sites().save_settings(
        user_principal(app).org_id, request.domains, request.test_event_code
    )
    logger.info("site settings saved", extra={"domains": len(site.domains)})
    return site_view(site, _endpoint())


@app.post("/platform-ads/events/site/key", middlewares=[require_user], security=USER_AUTH, tags=["Events"])
@tracer.capture_method
def issue_key() -> SiteSettingsView:
    """Create the site key, or rotate it: the key it replaces keeps working for a day, while the new
    snippet reaches every page. 422 while no domain is declared."""
    site = wiring.event_sites().issue_key(user_principal(app).org_id)
    logger.info("site key issued", extra={"rotated": site.previous_key is not None})
    return site_view(site, _endpoint())


@app.delete("/platform-ads/events/site/key", middlewares=[require_user], security=USER_AUTH, tags=["Events"])
@tracer.capture_method
def revoke_key() -> SiteSettingsView:
    """Revoke the site key (and one rotated out): from now on its requests get 401."""
    site = wiring.event_sites().revoke_key(user_principal(app).org_id)
    logger.info("site key revoked")
    return site_view(site, _endpoint())


lambda_handler = http_entry_point(app)
