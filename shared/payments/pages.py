"""The hosted checkout's public pages, as HTML: the product with its quantity, and the clear pages a
shopper meets instead of an error (unknown product, no price, payments not taken), after paying and
after cancelling.

Plain, accessible HTML with its style inline and no script (WCAG 2.2 AA: landmarks, one heading,
labelled fields, an alert for a refused quantity, contrast, visible focus). Every value shown is
escaped. The pages never hold card fields: paying happens on the provider's own page.
"""

from __future__ import annotations

from html import escape

STYLE = (
    "body{font-family:system-ui,sans-serif;margin:0;background:#f6f7f9;color:#1b1f24;line-height:1.5}"
    "main{max-width:34rem;margin:2rem auto;padding:1.5rem;background:#fff;border:1px solid #d0d7de;"
    "border-radius:8px}h1{font-size:1.5rem;margin-top:0}.price{font-size:1.25rem;font-weight:600}"
    "label{display:block;font-weight:600;margin-top:1rem}input{font:inherit;padding:.4rem;width:6rem;"
    "border:1px solid #57606a;border-radius:4px}button{font:inherit;margin-top:1rem;padding:.6rem 1.2rem;"
    "border:0;border-radius:6px;background:#0a5bd3;color:#fff;cursor:pointer}"
    "a{color:#0a5bd3}:focus-visible{outline:3px solid #bf5a00;outline-offset:2px}"
    ".hint{color:#57606a;font-size:.9rem}[role=alert]{color:#a40e26;font-weight:600}"
)
# No script, no frames, nothing fetched but the page: a page that takes no card cannot leak one.
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; "
    "frame-ancestors 'none'",
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


def page(title: str, body: str) -> str:
    """A whole page: ``body`` (already escaped HTML) in the checkout's frame."""
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="robots" content="noindex">'
        f"<title>{escape(title)}</title><style>{STYLE}</style></head>"
        f"<body><main>{body}</main></body></html>"
    )


def product_page(
    *,
    shop: str,
    product: str,
    unit_price: str,
    quantity: int,
    max_quantity: int,
    error: str | None = None,
) -> str:
    """The product, its price and the quantity to buy; the form posts to the page's own address."""
    alert = f'<p role="alert" id="quantity-error">{escape(error)}</p>' if error else ""
    described = ' aria-describedby="quantity-error" aria-invalid="true"' if error else ""
    body = (
        f"<p>{escape(shop)}</p><h1>{escape(product)}</h1>"
        f'<p class="price">{escape(unit_price)} <span class="hint">each</span></p>'
        '<form method="post">'
        '<label for="quantity">Quantity</label>'
        f'<input id="quantity" name="quantity" type="number" inputmode="numeric" min="1" '
        f'max="{max_quantity}" step="1" value="{quantity}" required{described}>'
        f"{alert}"
        '<button type="submit">Continue to secure payment</button></form>'
        '<p class="hint">You pay on the payment provider\'s own secure page: your card details never '
        "reach this shop's pages.</p>"
    )
    return page(f"{product} · {shop}", body)


def message_page(title: str, message: str, *, link: tuple[str, str] | None = None) -> str:
    """A page that says what happened and, with ``link`` (address, text), where to go next."""
    after = f'<p><a href="{escape(link[0])}">{escape(link[1])}</a></p>' if link else ""
    return page(title, f"<h1>{escape(title)}</h1><p>{escape(message)}</p>{after}")
