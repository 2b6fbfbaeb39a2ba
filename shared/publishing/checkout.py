"""The organization's checkout link template: the second checkout route of Publish advert.

Without a template only the store's product page is offered, and the settings say why.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from shared.publishing.links import check_checkout_template
from shared.publishing.models import CheckoutLinkSettings, CheckoutRoute

NO_TEMPLATE_REASON = (
    "The service takes no payments itself: set a checkout link template from your payment provider "
    "(a hosted payment link with {product_id} in it) to offer the checkout route."
)


class CheckoutTemplateStore(Protocol):
    def checkout_template(self, org_id: str) -> str | None: ...
    def set_checkout_template(self, org_id: str, template: str | None) -> None: ...


@dataclass
class CheckoutLinks:
    store: CheckoutTemplateStore
    allowed_domains: tuple[str, ...]

    def settings(self, org_id: str) -> CheckoutLinkSettings:
        """The template, the allowed domains and the routes Publish advert offers."""
        return self._settings(self.store.checkout_template(org_id))

    def change(self, org_id: str, template: str | None) -> CheckoutLinkSettings:
        """Validate and store ``template`` (None removes it); raises ``ValidationFailed`` on a bad one."""
        if template is not None:
            template = check_checkout_template(template.strip(), self.allowed_domains)
        self.store.set_checkout_template(org_id, template)
        return self._settings(template)

    def _settings(self, template: str | None) -> CheckoutLinkSettings:
        routes: list[CheckoutRoute] = ["product_page", "checkout_link"] if template else ["product_page"]
        return CheckoutLinkSettings(
            template=template,
            allowed_domains=list(self.allowed_domains),
            routes=routes,
            reason=None if template else NO_TEMPLATE_REASON,
        )
