"""Named scenarios: ready-made worlds for the situations of docs/service-contract.md §7.2 and
docs/platform-notes.md §A.

Every scenario starts from the default world (one marketer who is admin and tester of a live app
and admin of one business-owned ad account with ToS accepted, a pixel, a page and a funding
source) and changes exactly what its name says.
"""

from __future__ import annotations

from collections.abc import Callable

from platform_sandbox.config import SandboxConfig
from platform_sandbox.world import (
    AccountRole,
    AdAccount,
    App,
    AppMode,
    AppRole,
    Business,
    Page,
    Pixel,
    User,
    World,
)

USER_ID = "10000000000000001"
BUSINESS_ID = "20000000000000001"
BUSINESS_ACCOUNT_ID = "100000000000001"
PERSONAL_ACCOUNT_ID = "100000000000002"
PIXEL_ID = "30000000000000001"
PAGE_ID = "40000000000000001"


def default_world(config: SandboxConfig) -> World:
    """The happy path: everything a marketer needs to create audiences and publish adverts."""
    app = App(
        app_id=config.app_id,
        secret=config.app_secret,
        name=config.app_name,
        roles={USER_ID: {AppRole.ADMIN, AppRole.TESTER}},
    )
    account = AdAccount(
        account_id=BUSINESS_ACCOUNT_ID,
        name="Sandbox Shop - Business",
        roles={USER_ID: AccountRole.ADMIN},
        business=Business(BUSINESS_ID, "Sandbox Shop Ltd"),
        default_dsa_beneficiary="Sandbox Shop Ltd",
        default_dsa_payor="Sandbox Shop Ltd",
    )
    return World(
        app=app,
        users={USER_ID: User(USER_ID, "Sandbox Marketer")},
        accounts={account.account_id: account},
        pixels={PIXEL_ID: Pixel(PIXEL_ID, "Sandbox Shop Pixel", BUSINESS_ACCOUNT_ID)},
        pages={PAGE_ID: Page(PAGE_ID, "Sandbox Shop", {USER_ID: ["ADVERTISE", "ANALYZE", "CREATE_CONTENT"]})},
        dialog_user_id=USER_ID,
    )


def _personal_account() -> AdAccount:
    return AdAccount(
        account_id=PERSONAL_ACCOUNT_ID,
        name="Sandbox Marketer - Personal",
        roles={USER_ID: AccountRole.ADMIN},
        business=None,
        # ToS are accepted per business, so a personal account never has them (docs/platform-notes.md §2.3).
        tos_accepted=False,
    )


def personal_account_only(world: World) -> None:
    world.accounts = {PERSONAL_ACCOUNT_ID: _personal_account()}
    world.pixels.clear()


def several_accounts(world: World) -> None:
    # Personal first, so a client that simply takes the first account picks the wrong one.
    world.accounts = {PERSONAL_ACCOUNT_ID: _personal_account(), **world.accounts}


def terms_not_accepted(world: World) -> None:
    world.accounts[BUSINESS_ACCOUNT_ID].tos_accepted = False


def no_pixel(world: World) -> None:
    world.pixels.clear()


def no_payment_method(world: World) -> None:
    world.accounts[BUSINESS_ACCOUNT_ID].funding_source = None


def app_in_development_mode(world: World) -> None:
    # The user is admin and tester, so audiences work; only publishing adverts fails
    # (docs/service-contract.md §5).
    world.app.mode = AppMode.DEVELOPMENT


def user_not_tester(world: World) -> None:
    world.app.mode = AppMode.DEVELOPMENT
    world.app.roles.clear()


def analyst_role_only(world: World) -> None:
    # The marketer can see the business account (and connect) but not advertise on it: the Analyst
    # role grants the ANALYZE task only (docs/platform-notes.md §1.7).
    world.accounts[BUSINESS_ACCOUNT_ID].roles[USER_ID] = AccountRole.ANALYST


def no_ad_accounts(world: World) -> None:
    world.accounts.clear()
    world.pixels.clear()


def app_domain_missing(world: World) -> None:
    world.app.allowed_redirect_prefixes = ["https://registered.example.com/"]


SCENARIOS: dict[str, Callable[[World], None]] = {
    "default": lambda world: None,
    "personal_account_only": personal_account_only,
    "several_accounts": several_accounts,
    "terms_not_accepted": terms_not_accepted,
    "no_pixel": no_pixel,
    "no_payment_method": no_payment_method,
    "app_in_development_mode": app_in_development_mode,
    "user_not_tester": user_not_tester,
    "analyst_role_only": analyst_role_only,
    "no_ad_accounts": no_ad_accounts,
    "app_domain_missing": app_domain_missing,
}


def build_world(name: str, config: SandboxConfig) -> World:
    """A fresh world for scenario ``name``; raises ``KeyError`` for an unknown name."""
    adjust = SCENARIOS[name]
    world = default_world(config)
    adjust(world)
    return world
