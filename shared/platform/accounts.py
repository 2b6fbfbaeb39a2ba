"""Ad accounts and pixels: listing them and choosing the one the service can work with."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from shared.platform.client import GraphClient
from shared.platform.encoding import ad_account_node
from shared.platform.errors import BUSINESS_ACCOUNT_REQUIRED, NO_AD_ACCOUNTS, PIXEL_NOT_FOUND, build_error

ACCOUNT_STATUS_ACTIVE = 1
AD_ACCOUNT_FIELDS = "id,account_id,name,account_status,business{id,name},currency,funding_source,tos_accepted"
PIXEL_FIELDS = "id,name,last_fired_time,is_unavailable"


class AdAccount(BaseModel):
    """An ad account the connected user can access. ``business_id`` None means a personal account."""

    model_config = ConfigDict(frozen=True)

    id: str
    account_id: str
    name: str
    account_status: int
    business_id: str | None = None
    business_name: str | None = None
    tos_accepted: bool = False
    currency: str | None = None
    has_funding: bool = False

    @property
    def is_business_owned(self) -> bool:
        return self.business_id is not None

    @property
    def is_active(self) -> bool:
        return self.account_status == ACCOUNT_STATUS_ACTIVE

    @classmethod
    def from_graph(cls, node: dict[str, Any]) -> AdAccount:
        """Build from an ``/me/adaccounts`` item requested with ``AD_ACCOUNT_FIELDS``."""
        business = _as_dict(node.get("business"))
        tos = _as_dict(node.get("tos_accepted"))
        account_id = str(node.get("account_id") or str(node["id"]).removeprefix("act_"))
        return cls(
            id=ad_account_node(account_id),
            account_id=account_id,
            name=str(node.get("name") or ""),
            account_status=int(node.get("account_status") or 0),
            business_id=business.get("id"),
            business_name=business.get("name"),
            tos_accepted=tos.get("custom_audience_tos") == 1,
            currency=node.get("currency"),
            has_funding=bool(node.get("funding_source")),
        )


class Pixel(BaseModel):
    """A conversion pixel (dataset) linked to an ad account."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    id: str
    name: str = ""
    last_fired_time: str | None = None
    is_unavailable: bool = False


def list_ad_accounts(client: GraphClient) -> list[AdAccount]:
    """Every ad account the token's user can access (all pages). Empty is not an error here."""
    return [
        AdAccount.from_graph(node) for node in client.iterate("me/adaccounts", {"fields": AD_ACCOUNT_FIELDS})
    ]


def select_business_account(accounts: Sequence[AdAccount], preferred_id: str | None = None) -> AdAccount:
    """The ad account customer-list audiences can use: business-owned and active.

    ``preferred_id`` (with or without ``act_``) picks among several usable accounts; otherwise the
    first with Custom Audience terms accepted wins, then the first listed. Raises ``NoAdAccounts``
    when there is no usable account, ``BusinessAccountRequired`` when all accounts are personal.
    """
    if not accounts:
        raise build_error(NO_AD_ACCOUNTS)
    business_owned = [account for account in accounts if account.is_business_owned]
    if not business_owned:
        raise build_error(BUSINESS_ACCOUNT_REQUIRED)
    usable = [account for account in business_owned if account.is_active]
    if not usable:
        raise build_error(NO_AD_ACCOUNTS)
    if preferred_id is not None:
        wanted = ad_account_node(preferred_id)
        for account in usable:
            if account.id == wanted:
                return account
    return next((account for account in usable if account.tos_accepted), usable[0])


def list_pixels(client: GraphClient, ad_account_id: str) -> list[Pixel]:
    """The pixels linked to an ad account (all pages)."""
    path = f"{ad_account_node(ad_account_id)}/adspixels"
    return [Pixel.model_validate(node) for node in client.iterate(path, {"fields": PIXEL_FIELDS})]


def require_pixel(pixels: Sequence[Pixel]) -> Pixel:
    """The pixel Publish advert optimises for: the first available one. Raises ``PixelNotFound``."""
    for pixel in pixels:
        if not pixel.is_unavailable:
            return pixel
    raise build_error(PIXEL_NOT_FOUND)


def _as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


ACCOUNT_SETTINGS_FIELDS = (
    "id,account_id,name,account_status,currency,min_daily_budget,business{id,name},funding_source,"
    "default_dsa_beneficiary,default_dsa_payor"
)
PAGE_FIELDS = "id,name"


class AdAccountSettings(BaseModel):
    """What publishing needs to know of an ad account (docs/platform-notes.md §1.7): its currency,
    minimum daily budget in minor units, business, payment method and DSA beneficiary and payer."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    currency: str
    min_daily_budget: int | None = None
    business_name: str | None = None
    has_funding: bool = False
    default_dsa_beneficiary: str | None = None
    default_dsa_payor: str | None = None


class Page(BaseModel):
    """A Facebook Page the ad account can promote (the creative's ``page_id``)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    id: str
    name: str = ""


def read_ad_account(client: GraphClient, ad_account_id: str) -> AdAccountSettings:
    """Read the publishing settings of one ad account."""
    node = client.get(ad_account_node(ad_account_id), {"fields": ACCOUNT_SETTINGS_FIELDS}).body
    business = _as_dict(node.get("business"))
    budget = node.get("min_daily_budget")
    return AdAccountSettings(
        id=ad_account_node(ad_account_id),
        name=str(node.get("name") or ""),
        currency=str(node.get("currency") or ""),
        min_daily_budget=int(budget) if budget is not None else None,
        business_name=business.get("name") or None,
        has_funding=bool(node.get("funding_source")),
        default_dsa_beneficiary=node.get("default_dsa_beneficiary") or None,
        default_dsa_payor=node.get("default_dsa_payor") or None,
    )


def list_promotable_pages(client: GraphClient, ad_account_id: str) -> list[Page]:
    """The Pages the ad account can promote (``/act_<id>/promote_pages``, docs/platform-notes.md §6.4)."""
    path = f"{ad_account_node(ad_account_id)}/promote_pages"
    return [Page.model_validate(node) for node in client.iterate(path, {"fields": PAGE_FIELDS})]
