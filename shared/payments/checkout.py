"""The hosted quick-pay checkout: a public page per organization and product, and the provider's
Checkout Session it starts (docs/payments-notes.md §3).

``/checkout/<org>/<product>`` shows the product with its name and price from the organization's
synced products file (never from the address) and asks for a quantity; posting it saves a checkout
record, then creates a Checkout Session on the organization's connected account, with that record's
id in the idempotency key, and sends the shopper to the provider's hosted page. No card data ever
reaches the service. What cannot be sold (an unknown product, another organization's, a product
without a price, an organization that takes no card payments) gets a page that says so, never an
error. The success page only thanks: the order is made from the provider's webhook, since a shopper
may never come back to it (docs/payments-notes.md §3.4).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol
from urllib.parse import parse_qs, quote

from shared.clock import Clock
from shared.errors import PreconditionFailed
from shared.observability import logger
from shared.payments.catalog import CatalogProduct
from shared.payments.money import format_amount, to_minor_units
from shared.payments.pages import message_page, product_page
from shared.payments.provider import (
    CheckoutLine,
    PaymentsAccountRefused,
    PaymentsProvider,
    PaymentsUnavailable,
)
from shared.records.connections import EncryptedSecret
from shared.records.payments import CheckoutRecord, PaymentsConnection

if TYPE_CHECKING:
    from shared.datasources.catalog import Listing  # (numpy: imported where a listing is read)

MAX_QUANTITY = 99
# The longest path value the pages accept (an organization or product id).
MAX_ID_LENGTH = 256
NOT_TAKING_PAYMENTS = "This shop is not taking card payments here right now."
NO_CHECKOUT_REMEDY = (
    "Connect a payments account on the dashboard's Payments page and finish the provider's set-up: "
    "the hosted checkout is offered once it takes card payments."
)


class Connections(Protocol):
    def get_connection(self, org_id: str) -> PaymentsConnection | None: ...


class Checkouts(Protocol):
    def put_checkout(self, record: CheckoutRecord) -> None: ...


class Catalog(Protocol):
    def product(self, org_id: str, product_id: str) -> CatalogProduct | None: ...


class Decrypt(Protocol):
    def decrypt(self, secret: EncryptedSecret, context: dict[str, str]) -> str: ...


def checkout_path(org_id: str, product_id: str) -> str:
    """The product's checkout page, under the service's address."""
    return f"/checkout/{quote(org_id, safe='')}/{quote(product_id, safe='')}"


@dataclass(frozen=True)
class PageAnswer:
    """What a checkout route answers: a page with its status, or a redirect (303) to ``location``."""

    status: int
    html: str | None = None
    location: str | None = None


def checkout_available(connection: PaymentsConnection | None) -> bool:
    """Whether the organization's connected account takes card payments."""
    return (
        connection is not None
        and connection.status == "active"
        and connection.charges_enabled
        and connection.account is not None
        and bool(connection.default_currency)
    )


@dataclass
class CheckoutService:
    """The checkout of one request; collaborators are passed in. Only the function that starts a
    payment gets ``provider`` and ``cipher`` (it reads the payments secret)."""

    connections: Connections
    checkouts: Checkouts
    catalog: Catalog
    clock: Clock
    cipher: Decrypt | None = None
    provider: PaymentsProvider | None = field(default=None, repr=False)

    # --- the pages ----------------------------------------------------------------------------------

    def product_page(self, org_id: str, product_id: str, quantity: str | None = None) -> PageAnswer:
        """The product and a quantity to buy (``quantity`` as the address gave it, 1 when absent or
        unusable), or the page saying why it cannot be bought here."""
        sellable = self._sellable(org_id, product_id)
        if isinstance(sellable, PageAnswer):
            return sellable
        connection, product, unit_amount = sellable
        chosen = _quantity(quantity) or 1
        return PageAnswer(200, self._product_html(connection, product, unit_amount, chosen, None))

    def start(
        self, org_id: str, product_id: str, form: str, page_url: str, user_agent: str | None = None
    ) -> PageAnswer:
        """Start paying: the quantity from the posted ``form`` (``quantity=<1..99>``), a checkout
        record saved first, then the provider's Checkout Session on the organization's account for
        the catalogue's name and price, coming back to ``page_url`` (the product page's address, as
        the shopper reached it) + ``/paid`` or ``/cancelled``; answers the redirect to the provider's
        page, or a page that says why not (a quantity out of range is asked again, 400)."""
        sellable = self._sellable(org_id, product_id)
        if isinstance(sellable, PageAnswer):
            return sellable
        connection, product, unit_amount = sellable
        quantity = _quantity(_form_value(form, "quantity"))
        if quantity is None:
            error = f"Enter a quantity from 1 to {MAX_QUANTITY}."
            return PageAnswer(400, self._product_html(connection, product, unit_amount, 1, error))
        assert connection.default_currency is not None
        now = self.clock()
        record = CheckoutRecord(
            org_id=org_id,
            checkout_id=str(uuid.uuid4()),
            product_id=product.product_id,
            product_name=product.name,
            quantity=quantity,
            unit_amount=unit_amount,
            amount_total=unit_amount * quantity,
            currency=connection.default_currency,
            created_at=now,
            updated_at=now,
            client_user_agent=(user_agent or "")[:512] or None,
        )
        self.checkouts.put_checkout(record)
        try:
            session = self._provider().create_session(
                self._account_id(connection),
                line=CheckoutLine(
                    name=product.name, unit_amount=unit_amount, currency=record.currency, quantity=quantity
                ),
                # The provider puts the session id in place of the literal {CHECKOUT_SESSION_ID}.
                success_url=f"{page_url}/paid?session_id={{CHECKOUT_SESSION_ID}}",
                cancel_url=f"{page_url}/cancelled",
                reference=record.checkout_id,
                metadata={"org_id": org_id, "checkout_id": record.checkout_id, "product_id": product_id},
                idempotency_key=f"checkout-session-{record.checkout_id}",
            )
        except PaymentsUnavailable:
            return PageAnswer(
                503,
                message_page(
                    "Payment could not be opened",
                    "The payment page could not be opened just now. Nothing was charged: please try again.",
                    link=(quote(product_id, safe=""), f"Back to {product.name}"),
                ),
            )
        except PaymentsAccountRefused:
            logger.warning("checkout refused by the payments account", extra={"org_id": org_id})
            return _not_taking_payments()
        record.session_id = session.session_id
        record.state = "open"
        record.session_expires_at = session.expires_at
        record.updated_at = self.clock()
        self.checkouts.put_checkout(record)
        if session.url is None:
            return _not_taking_payments()
        logger.info("checkout started", extra={"org_id": org_id, "checkout_id": record.checkout_id})
        return PageAnswer(303, location=session.url)

    def paid_page(self, org_id: str, product_id: str) -> PageAnswer:
        """After paying: thanks, without claiming the payment (the provider's webhook records it)."""
        shop = self._shop(self.connections.get_connection(org_id))
        return PageAnswer(
            200,
            message_page(
                "Thank you for your order",
                f"Your payment to {shop} is being confirmed. The receipt is sent to the e-mail address "
                "you gave on the payment page.",
            ),
        )

    def cancelled_page(self, org_id: str, product_id: str) -> PageAnswer:
        """After leaving the provider's page without paying: nothing was charged, and the way back."""
        return PageAnswer(
            200,
            message_page(
                "Payment cancelled",
                "You left the payment page before paying: nothing was charged.",
                # Relative to .../<product>/cancelled: the product's own page.
                link=(f"../{quote(product_id, safe='')}", "Back to the product"),
            ),
        )

    # --- helpers ------------------------------------------------------------------------------------

    def _sellable(
        self, org_id: str, product_id: str
    ) -> tuple[PaymentsConnection, CatalogProduct, int] | PageAnswer:
        if not (0 < len(org_id) <= MAX_ID_LENGTH and 0 < len(product_id) <= MAX_ID_LENGTH):
            return _unknown_product()
        connection = self.connections.get_connection(org_id)
        if not checkout_available(connection):
            return _not_taking_payments()
        assert connection is not None
        assert connection.default_currency is not None
        product = self.catalog.product(org_id, product_id)
        if product is None:
            return _unknown_product()
        if product.price is None:
            return PageAnswer(
                404,
                message_page(
                    "Not for sale here",
                    f"{product.name} cannot be bought on this page: the shop has not given it a price.",
                ),
            )
        unit_amount = to_minor_units(product.price, connection.default_currency)
        if unit_amount < 1:
            return _unknown_product()
        return connection, product, unit_amount

    def _product_html(
        self,
        connection: PaymentsConnection,
        product: CatalogProduct,
        unit_amount: int,
        quantity: int,
        error: str | None,
    ) -> str:
        assert connection.default_currency is not None
        return product_page(
            shop=self._shop(connection),
            product=product.name,
            unit_price=format_amount(unit_amount, connection.default_currency),
            quantity=quantity,
            max_quantity=MAX_QUANTITY,
            error=error,
        )

    def _account_id(self, connection: PaymentsConnection) -> str:
        assert self.cipher is not None
        assert connection.account is not None
        return self.cipher.decrypt(connection.account, connection.account_context())

    def _provider(self) -> PaymentsProvider:
        assert self.provider is not None, "this function's wiring gives no payments provider"
        return self.provider

    @staticmethod
    def _shop(connection: PaymentsConnection | None) -> str:
        return (connection.business_name if connection else None) or "the shop"


class ProductListings(Protocol):
    """``shared.datasources.catalog.Catalogs``."""

    def listing(self, org_id: str, product_id: str) -> Listing: ...


# Why a product's checkout page would not sell it, by what the synced products say, and what to do.
PRODUCT_PAGE_INSTEAD = "or send shoppers to the store's product page."
UNSELLABLE: dict[Listing, tuple[str, str]] = {
    "no_products": (
        "The hosted checkout sells from the shop's synced products file, and none is synced yet.",
        f"Sync the shop's products file with each product's price, {PRODUCT_PAGE_INSTEAD}",
    ),
    "unlisted": (
        "The hosted checkout cannot sell {product}: the shop's synced products do not list it.",
        f"Sync a products file that lists it with its price, {PRODUCT_PAGE_INSTEAD}",
    ),
    "no_price": (
        "The hosted checkout cannot sell {product}: the shop's synced products give it no price.",
        f"Give it a price in the products file and sync again, {PRODUCT_PAGE_INSTEAD}",
    ),
}


@dataclass
class HostedCheckoutLinks:
    """What publishing asks of payments: whether the hosted checkout can take an organization's
    payments, whether it can sell a product, and a product's checkout address (under the address
    the service was reached at when the payments account was connected)."""

    connections: Connections
    # What the synced products say of a product (its page sells only a listed, priced one); None:
    # not asked (the address is given for any product).
    listings: ProductListings | None = None

    def available(self, org_id: str) -> bool:
        connection = self.connections.get_connection(org_id)
        return checkout_available(connection) and bool(connection and connection.checkout_base_url)

    def cannot_sell(self, org_id: str, product_id: str) -> tuple[str, str] | None:
        """Why ``product_id``'s checkout page would answer "not sold here" by the organization's
        synced products (reason, remedy): none synced, the product not listed, or listed without a
        price. None when it is listed with a price, or the version cannot tell (stored before its
        catalog's prices were kept)."""
        listing = self.listings.listing(org_id, product_id) if self.listings is not None else "unknown"
        if listing not in UNSELLABLE:
            return None
        reason, remedy = UNSELLABLE[listing]
        return reason.format(product=repr(product_id)), remedy

    def url(self, org_id: str, product_id: str) -> str:
        """The hosted checkout's address for ``product_id``; ``PreconditionFailed`` (field
        ``checkoutRoute``) when the organization's payments account does not take card payments, or
        when the page would not sell the product (:meth:`cannot_sell`): an advert would send shoppers
        to a page saying it is not sold here."""
        connection = self.connections.get_connection(org_id)
        if connection is None or not self.available(org_id) or not connection.checkout_base_url:
            raise PreconditionFailed(
                "checkoutRoute: the hosted quick-pay checkout needs a payments account that takes card "
                "payments, and this organization has none.",
                field="checkoutRoute",
                remedy=NO_CHECKOUT_REMEDY,
            )
        if (unsellable := self.cannot_sell(org_id, product_id)) is not None:
            reason, remedy = unsellable
            raise PreconditionFailed(f"checkoutRoute: {reason}", field="checkoutRoute", remedy=remedy)
        return connection.checkout_base_url.rstrip("/") + checkout_path(org_id, product_id)


def _quantity(text: str | None) -> int | None:
    """A quantity from 1 to ``MAX_QUANTITY``, or None."""
    if text is None or not text.strip().isdigit() or len(text.strip()) > 3:
        return None
    value = int(text.strip())
    return value if 1 <= value <= MAX_QUANTITY else None


def _form_value(form: str, name: str) -> str | None:
    values = parse_qs(form[:4096], keep_blank_values=True).get(name)
    return values[0] if values else None


def _unknown_product() -> PageAnswer:
    return PageAnswer(
        404,
        message_page(
            "Product not found",
            "This product is not sold here. The link may be old, or the product is no longer in the shop.",
        ),
    )


def _not_taking_payments() -> PageAnswer:
    # Not a failure of the service: nothing can be bought here (404), as for an unknown product.
    return PageAnswer(
        404,
        message_page(
            "Payments unavailable",
            f"{NOT_TAKING_PAYMENTS} Please come back later, or buy from the shop's own website.",
        ),
    )
