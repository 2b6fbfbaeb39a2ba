"""Country names and common forms as ISO 3166-1 alpha-2 codes (docs/platform-notes.md §3.7: the
platform takes ``COUNTRY`` as the lower-case alpha-2 code), read with ``pycountry``'s ISO 3166 tables.

Shops export a customer's country as a code (``GB``), an alpha-3 code (``GBR``), an English name
(``United Kingdom``, ``United States of America``) or a common form (``USA``, ``U.K.``, ``England``).
The ISO names, official names, common names and alpha-3 codes come from the library; the forms people
type that ISO does not list are the short table below. Callers import this module only for a value
that is not already a two-letter code (``shared.audiences.identifiers.normalise_country``, a sync's
customers, the customer record model), so most lists and requests never load it. It sits in the
foundation layer: the record models (``shared.ml``) and the services both read countries with it.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping

import pycountry

# Forms merchants' customers type that are in no ISO table (keys as _key() makes them).
COMMON_FORMS: Mapping[str, str] = {
    "uk": "gb",
    "greatbritain": "gb",
    "britain": "gb",
    "england": "gb",
    "scotland": "gb",
    "wales": "gb",
    "northernireland": "gb",
    "us": "us",
    "usa": "us",
    "america": "us",
    "unitedstatesofamerica": "us",
    "holland": "nl",
    "thenetherlands": "nl",
    "russia": "ru",
    "southkorea": "kr",
    "korea": "kr",
    "republicofkorea": "kr",
    "northkorea": "kp",
    "turkey": "tr",
    "ivorycoast": "ci",
    "uae": "ae",
    "emirates": "ae",
    "macedonia": "mk",
    "laos": "la",
    "syria": "sy",
    "moldova": "md",
    "vaticancity": "va",
    "czechrepublic": "cz",
    "swaziland": "sz",
    "burma": "mm",
    "capeverde": "cv",
    "eastimor": "tl",
    "palestine": "ps",
}
_NOT_LETTERS = re.compile(r"[^a-z]+")


def _key(text: str) -> str:
    """Lower-case letters a-z only, accents taken off (``"U.K."`` -> ``"uk"``, ``"Türkiye"`` ->
    ``"turkiye"``)."""
    plain = unicodedata.normalize("NFKD", text.lower()).encode("ascii", "ignore").decode()
    return _NOT_LETTERS.sub("", plain)


def _by_key() -> dict[str, str]:
    table: dict[str, str] = {}
    for country in pycountry.countries:
        code = country.alpha_2.lower()
        for name in (
            country.alpha_3,
            country.name,
            getattr(country, "official_name", None),
            getattr(country, "common_name", None),
        ):
            if name:
                table.setdefault(_key(name), code)
    # "Korea, Republic of" is also read as "Republic of Korea"; the common forms win over them.
    for country in pycountry.countries:
        if ", " in country.name:
            head, _, tail = country.name.partition(", ")
            table.setdefault(_key(f"{tail} {head}"), country.alpha_2.lower())
    table.update(COMMON_FORMS)
    return table


_BY_KEY = _by_key()


def country_code(text: str) -> str | None:
    """The lower-case alpha-2 code of the country ``text`` names (a code, an ISO or common name, in
    any case, with or without dots and spaces), or None when it names none."""
    return _BY_KEY.get(_key(text))
