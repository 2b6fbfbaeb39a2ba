"""The user and the ad accounts, pages and pixels they reach (docs/platform-notes.md §1.7, §6.2, §6.4)."""

from __future__ import annotations

from flask import Blueprint

from platform_sandbox import errors, events
from platform_sandbox.graph import GraphCall, Payload, edge_page, graph_endpoint, project
from platform_sandbox.usage import BucType
from platform_sandbox.world import ACCOUNT_TASKS, AdAccount, Page, Pixel, World

blueprint = Blueprint("accounts", __name__)


def account_node(account: AdAccount, user_id: str) -> Payload:
    """Every field the sandbox knows of an ad account; ``business`` is null for a personal account."""
    business = account.business
    return {
        "id": account.graph_id,
        "account_id": account.account_id,
        "name": account.name,
        "account_status": account.account_status,
        "disable_reason": 0,
        "business": {"id": business.business_id, "name": business.name} if business else None,
        # A VAT flag, unrelated to business ownership (docs/platform-notes.md §1.7).
        "is_personal": 0,
        "owner": business.business_id if business else user_id,
        "currency": account.currency,
        "timezone_name": account.timezone_name,
        "funding_source": account.funding_source,
        "funding_source_details": {"id": account.funding_source, "type": 1}
        if account.funding_source
        else None,
        "tos_accepted": {"custom_audience_tos": 1} if account.tos_accepted else {},
        "user_tasks": ACCOUNT_TASKS[account.roles[user_id]],
        "min_daily_budget": account.min_daily_budget,
        "default_dsa_beneficiary": account.default_dsa_beneficiary,
        "default_dsa_payor": account.default_dsa_payor,
    }


def pixel_node(pixel: Pixel, world: World) -> Payload:
    """A pixel's fields; ``last_fired_time`` is when it last received a live event (docs/platform-notes.md
    §11.7), null until then."""
    return {
        "id": pixel.pixel_id,
        "name": pixel.name,
        "is_unavailable": False,
        "last_fired_time": events.last_fired_time(world, pixel),
    }


def page_node(page: Page, user_id: str) -> Payload:
    return {"id": page.page_id, "name": page.name, "tasks": page.roles[user_id]}


@graph_endpoint(blueprint, "/me", ["GET"])
def me(call: GraphCall) -> Payload:
    user = call.state.world.users[call.user_id]
    return project({"id": user.user_id, "name": user.name}, call.params, default=("name",), node_type="User")


@graph_endpoint(blueprint, "/me/permissions", ["GET"])
def me_permissions(call: GraphCall) -> Payload:
    return {"data": [{"permission": scope, "status": "granted"} for scope in call.token.scopes]}


@graph_endpoint(blueprint, "/me/adaccounts", ["GET"])
def me_adaccounts(call: GraphCall) -> Payload:
    """The ad accounts the user has a role on; an empty list (not an error) when there are none.

    A development-mode app answers only its Testers and Admins (docs/service-contract.md §5), so others
    get 200 here.
    """
    call.check_app_access()
    call.require_scope(write=False)
    accounts = call.state.world.accounts_of(call.user_id)
    nodes = [account_node(account, call.user_id) for account in accounts]
    return edge_page(nodes, call.params, node_type="AdAccount")


@graph_endpoint(blueprint, "/me/businesses", ["GET"])
def me_businesses(call: GraphCall) -> Payload:
    if "business_management" not in call.token.scopes:
        raise errors.missing_permission("business_management")
    businesses = {
        account.business.business_id: {"id": account.business.business_id, "name": account.business.name}
        for account in call.state.world.accounts_of(call.user_id)
        if account.business is not None
    }
    return edge_page(list(businesses.values()), call.params, node_type="Business")


@graph_endpoint(blueprint, "/me/accounts", ["GET"])
def me_pages(call: GraphCall) -> Payload:
    """Pages the user has a role on (``pages_show_list``), for creatives' ``page_id``."""
    pages = [page for page in call.state.world.pages.values() if call.user_id in page.roles]
    nodes = [page_node(page, call.user_id) for page in pages]
    return edge_page(nodes, call.params, node_type="Page")


@graph_endpoint(blueprint, "/act_<account_id>", ["GET"])
def ad_account(call: GraphCall, account_id: str) -> Payload:
    account = call.account(account_id, write=False, buc=BucType.ADS_MANAGEMENT)
    return _project_account(account_node(account, call.user_id), call)


@graph_endpoint(blueprint, "/act_<account_id>/adspixels", ["GET"])
def ad_account_pixels(call: GraphCall, account_id: str) -> Payload:
    """The account's pixels; an empty list means Publish advert cannot optimise for purchases."""
    call.account(account_id, write=False, buc=BucType.ADS_MANAGEMENT)
    world = call.state.world
    nodes = [pixel_node(pixel, world) for pixel in world.pixels_of(account_id)]
    return edge_page(nodes, call.params, node_type="AdsPixel")


@graph_endpoint(blueprint, "/act_<account_id>/promote_pages", ["GET"])
def ad_account_pages(call: GraphCall, account_id: str) -> Payload:
    call.account(account_id, write=False, buc=BucType.ADS_MANAGEMENT)
    return me_pages(call)


def _project_account(node: Payload, call: GraphCall) -> Payload:
    return project(node, call.params, default=("account_id",), node_type="AdAccount")
