"""Wire models of Publish advert, Generate campaign with audience and the checkout link (camelCase)."""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import Field, HttpUrl, WithJsonSchema

from shared.wire_models import CamelModel

CallToAction = Literal["SHOP_NOW", "BUY_NOW", "ORDER_NOW", "LEARN_MORE", "GET_OFFER", "SIGN_UP"]
SpecialAdCategory = Literal[
    "CREDIT", "EMPLOYMENT", "FINANCIAL_PRODUCTS_SERVICES", "HOUSING", "ISSUES_ELECTIONS_POLITICS",
    "ONLINE_GAMBLING_AND_GAMING",
]  # fmt: skip
CheckoutRoute = Literal["product_page", "hosted_checkout"]
CountryCode = Annotated[str, Field(pattern="^[A-Za-z]{2}$")]
# What the model takes (a positive decimal of at most 12 digits) and the budget check then allows (at
# most 2 decimals, budget.to_minor_units), as JSON Schema: a whole number, or a string of one with up to
# 2 decimals. A JSON number with decimals is taken too, but a float has no exact decimal places to
# promise (0.35000000000000003), so the document offers the exact forms.
DAILY_BUDGET_SCHEMA = WithJsonSchema(
    {
        "anyOf": [
            {"type": "integer", "minimum": 1, "maximum": 999_999_999_999},
            {"type": "string", "pattern": "^[1-9][0-9]{0,9}(\\.[0-9]{1,2})?$"},
        ],
        "description": 'Daily budget in the ad account\'s currency, e.g. 20 or "20.00" (GBP), at least the '
        "ad account's minimum daily budget.",
    }
)


class PublishAdvertRequest(CamelModel):
    """The destination setup of docs/service-contract.md §4.7 for an active audience."""

    campaign_name: str = Field(min_length=1, max_length=200)
    daily_budget: Annotated[Decimal, DAILY_BUDGET_SCHEMA] = Field(
        gt=0, max_digits=12, description="Daily budget in the ad account's currency, e.g. 20.00 (GBP)."
    )
    headline: str = Field(min_length=1, max_length=255)
    description: str | None = Field(default=None, max_length=255)
    message: str = Field(default="", max_length=2000, description="The advert's primary text.")
    destination_url: HttpUrl = Field(description="The store's product page.")
    checkout_route: CheckoutRoute = Field(
        default="product_page",
        description="product_page: the destination URL; hosted_checkout: the service's hosted quick-pay "
        "checkout page for the product, paid into the organization's payments account (see "
        "GET /platform-ads/checkout-routes).",
    )
    product_id: str | None = Field(
        default=None,
        max_length=200,
        description="For the hosted checkout: the product it sells; defaults to the audience's product.",
    )
    image_url: HttpUrl | None = None
    call_to_action: CallToAction = "SHOP_NOW"
    countries: list[CountryCode] | None = Field(
        default=None,
        max_length=25,
        description="Retargeting: countries to deliver in (ISO alpha-2); defaults to the customers' "
        "countries. Prospecting always uses the lookalike's country.",
    )
    special_ad_categories: list[SpecialAdCategory] = Field(default_factory=list)
    advantage_audience: bool = Field(
        default=False, description="Let the platform reach beyond the audience (sent explicitly either way)."
    )
    dsa_beneficiary: str | None = Field(
        default=None,
        max_length=512,
        description="Who benefits from the ads, where the targeted country requires it; defaults to the ad "
        "account's default beneficiary, then its business name.",
    )
    dsa_payor: str | None = Field(default=None, max_length=512, description="Who pays; defaults likewise.")
    activate: bool = Field(default=False, description="Activate the whole chain once it exists.")
    dry_run: bool = Field(
        default=False, description="Validate against the ad account and return the plan; create nothing."
    )


class AdObjectView(CamelModel):
    kind: str
    platform_id: str | None
    state: str
    params: dict[str, Any]


class PublicationView(CamelModel):
    """What Publish advert created (or, for a dry run, would create) and where it stands."""

    audience_id: str
    state: str
    dry_run: bool = False
    activate: bool
    ad_account_id: str
    currency: str
    destination_link: str
    objects: list[AdObjectView]
    warnings: list[str] = Field(
        default_factory=list, description="What the platform may still refuse, and what to do about it."
    )
    message: str


class AdsManagerLink(CamelModel):
    """Generate campaign with audience: where to build the ad by hand, with the audience ready."""

    audience_id: str
    ad_account_id: str
    platform_audience_ids: list[str]
    url: str
    message: str


class CheckoutRoutesView(CamelModel):
    """``GET /platform-ads/checkout-routes``: the checkout routes Publish advert offers."""

    routes: list[CheckoutRoute]
    reason: str | None = Field(description="Why the hosted checkout is not offered, when it is not.")
    remedy: str | None = Field(description="What to do to have it offered.")
    cause: Literal["payments", "product"] | None = Field(
        default=None,
        description="What keeps the hosted checkout from being offered: the payments account (none "
        "takes card payments), or the product (with productId: not in the synced products, or no price).",
    )
    checkout_url: str | None = Field(
        description="The product's hosted checkout page (with ?productId=, when offered): the advert's link."
    )
