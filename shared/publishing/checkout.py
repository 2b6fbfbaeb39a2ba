"""The checkout routes Publish advert offers: the store's product page, and the service's hosted
quick-pay checkout once the organization's payments account takes card payments.

Publishing only asks the payments package (``shared.payments``) whether the hosted checkout is
available and for a product's checkout address; without it, only the product page is offered, and
the settings say why and what to do.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from shared.publishing.models import CheckoutRoute, CheckoutRoutesView

NO_HOSTED_CHECKOUT = "The hosted quick-pay checkout needs a payments account that takes card payments."
CONNECT_PAYMENTS = (
    "Connect a payments account on the dashboard's Payments page and finish the payment provider's "
    "set-up; the hosted checkout is then offered here."
)


class HostedCheckout(Protocol):
    """``shared.payments.checkout.HostedCheckoutLinks``."""

    def available(self, org_id: str) -> bool: ...
    def cannot_sell(self, org_id: str, product_id: str) -> tuple[str, str] | None: ...
    def url(self, org_id: str, product_id: str) -> str: ...


@dataclass
class CheckoutRoutes:
    hosted: HostedCheckout

    def settings(self, org_id: str, product_id: str | None = None) -> CheckoutRoutesView:
        """The routes Publish advert offers, why the hosted checkout is not among them when it is
        not (``cause``: the payments account, or the product's checkout page would not sell it), and
        with ``product_id`` that product's checkout address."""
        if not self.hosted.available(org_id):
            return CheckoutRoutesView(
                routes=["product_page"],
                reason=NO_HOSTED_CHECKOUT,
                remedy=CONNECT_PAYMENTS,
                cause="payments",
                checkout_url=None,
            )
        if product_id and (unsellable := self.hosted.cannot_sell(org_id, product_id)) is not None:
            reason, remedy = unsellable
            return CheckoutRoutesView(
                routes=["product_page"], reason=reason, remedy=remedy, cause="product", checkout_url=None
            )
        routes: list[CheckoutRoute] = ["product_page", "hosted_checkout"]
        url = self.hosted.url(org_id, product_id) if product_id else None
        return CheckoutRoutesView(routes=routes, reason=None, remedy=None, cause=None, checkout_url=url)
