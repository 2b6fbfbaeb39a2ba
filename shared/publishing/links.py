"""Where the advert sends people (the store's product page or the hosted checkout), tagged with UTM
parameters naming the campaign and the audience."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

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
