"""Where the advert sends people: the store's product page or the organization's checkout link,
tagged with UTM parameters naming the campaign and the audience.

The service takes no payments. For the spec's "quick-pay checkout" route an organization configures
a checkout link template from its payment provider (a hosted payment link with ``{product_id}`` in
it); the link is built per product and must stay an ``https`` URL on a domain the operator allows.
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

from shared.errors import ValidationFailed

PRODUCT_PLACEHOLDER = "{product_id}"
UTM_SOURCE = "meta"
UTM_MEDIUM = "paid_social"


def with_utm(url: str, *, campaign: str, audience: str) -> str:
    """``url`` with ``utm_source``, ``utm_medium``, ``utm_campaign`` (the campaign name) and
    ``utm_content`` (the audience name); other query parameters are kept, earlier UTM values replaced."""
    parts = urlsplit(url)
    kept = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if not k.startswith("utm_")]
    utm = [
        ("utm_source", UTM_SOURCE),
        ("utm_medium", UTM_MEDIUM),
        ("utm_campaign", campaign),
        ("utm_content", audience),
    ]
    return urlunsplit(parts._replace(query=urlencode(kept + utm)))


def check_checkout_template(template: str, allowed_domains: Iterable[str]) -> str:
    """Return ``template`` if it is an https URL on an allowed domain with ``{product_id}`` in it;
    otherwise raise ``ValidationFailed`` naming the field ``template`` and what to change."""
    if PRODUCT_PLACEHOLDER not in template:
        raise ValidationFailed(
            f"template: the checkout link must contain {PRODUCT_PLACEHOLDER}, where the product goes.",
            field="template",
            remedy=f"Use your payment provider's product link with {PRODUCT_PLACEHOLDER} in place of its id.",
        )
    check_checkout_url(template.replace(PRODUCT_PLACEHOLDER, "product"), allowed_domains, field="template")
    return template


def checkout_link(template: str, product_id: str, allowed_domains: Iterable[str]) -> str:
    """The checkout link of ``product_id`` (percent-encoded into the template), checked again."""
    link = template.replace(PRODUCT_PLACEHOLDER, quote(product_id, safe=""))
    return check_checkout_url(link, allowed_domains, field="checkoutRoute")


def check_checkout_url(url: str, allowed_domains: Iterable[str], *, field: str) -> str:
    """``url`` if it is ``https`` on one of ``allowed_domains`` (or a subdomain of one)."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    allowed = sorted({domain.strip().lower() for domain in allowed_domains if domain.strip()})
    if parts.scheme != "https" or not host or parts.username or parts.password:
        raise ValidationFailed(
            f"{field}: the checkout link must be an https address without credentials in it.",
            field=field,
            remedy="Use your payment provider's https payment link.",
        )
    if not any(host == domain or host.endswith(f".{domain}") for domain in allowed):
        listed = ", ".join(allowed) or "none (the operator has not allowed any)"
        raise ValidationFailed(
            f"{field}: {host} is not an allowed checkout domain. Allowed: {listed}.",
            field=field,
            remedy="Use a payment link on an allowed domain, or ask the operator to allow your provider's.",
        )
    return url
