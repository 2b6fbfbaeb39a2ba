"""The reference audience preparation, the oracle the fast path is checked against, and its corpus.

:func:`prepare_reference` has the contract of ``shared.audiences.preparation.prepare_columns``,
written record by record for clarity rather than speed: per record, per field, the public
``normalise_*`` functions, then ``sha256_hex``. The unit tests compare the fast path with it on
:func:`generate_corpus`'s synthetic users; ``benchmarks.audience_hashing`` times the two side by side.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from functools import cache, partial

from shared.audiences.identifiers import (
    EXTRA_REPORT_KEYS,
    EXTRA_SCHEMA,
    SCHEMA,
    DropReason,
    extern_id_of,
    is_sha256_hex,
    normalise_city,
    normalise_country,
    normalise_date_of_birth,
    normalise_email,
    normalise_gender,
    normalise_madid,
    normalise_name,
    normalise_phone,
    normalise_postcode,
    normalise_state,
    sha256_hex,
)
from shared.audiences.preparation import PreparedAudience, Row
from shared.audiences.quality import build_report

Record = Mapping[str, str | None]
CORPUS_SIZE = 200_000


# --- the straightforward implementation ---------------------------------------------------------


def prepare_reference(records: Sequence[Record], *, default_country: str | None = None) -> PreparedAudience:
    """Same contract as ``prepare_columns``, written record by record for clarity rather than speed."""
    keys = (*SCHEMA[1:], *EXTRA_REPORT_KEYS)
    drops: dict[str, Counter[DropReason]] = {key: Counter() for key in keys}
    columns: dict[str, list[str]] = {key: [] for key in (*SCHEMA[1:], *EXTRA_SCHEMA)}
    prepared_rows: list[tuple[Record, tuple[str, ...]]] = []
    for record in records:
        # The customer's country when we can read it, else the store's.
        country = normalise_country(record.get("country"))
        if isinstance(country, DropReason):
            country = normalise_country(default_country)
        plan = None if isinstance(country, DropReason) else country
        values = {
            "EMAIL": _reference_value(record.get("email"), normalise_email),
            "PHONE": _reference_value(record.get("phone"), partial(normalise_phone, country=plan)),
            "FN": _reference_value(record.get("firstName"), normalise_name),
            "LN": _reference_value(record.get("lastName"), normalise_name),
            "COUNTRY": _reference_value(record.get("country"), normalise_country),
            "CT": _reference_value(record.get("city"), normalise_city),
            "ST": _reference_value(record.get("state"), partial(normalise_state, country=plan)),
            "ZIP": _reference_value(record.get("postcode"), partial(normalise_postcode, country=plan)),
            "GEN": _reference_value(record.get("gender"), normalise_gender),
            "MADID": normalise_madid(record.get("madid")),
        }
        born = normalise_date_of_birth(record.get("dateOfBirth"))
        if isinstance(born, DropReason):
            drops["DOB"][born] += 1
            born_hashed = ("", "", "")
        else:
            born_hashed = (sha256_hex(born[0]), sha256_hex(born[1]), sha256_hex(born[2]))
        for key, value in values.items():
            if isinstance(value, DropReason):
                drops[key][value] += 1
            columns[key].append("" if isinstance(value, DropReason) else value)
        for key, value in zip(("DOBY", "DOBM", "DOBD"), born_hashed, strict=True):
            columns[key].append(value)
        extern = extern_id_of(record["user_id"] or "", record.get("externalId"))
        prepared_rows.append((record, (extern, *(columns[key][-1] for key in (*SCHEMA[1:], *EXTRA_SCHEMA)))))
    # Of the other keys, those some user has a usable value for are sent; those some user gave are reported.
    sent = [key for key in EXTRA_SCHEMA if any(columns[key])]
    sent_at = [len(SCHEMA) + EXTRA_SCHEMA.index(key) for key in sent]
    rows: list[Row] = []
    kept_ids: set[str] = set()
    no_identifier = duplicates = 0
    for record, full in prepared_rows:
        row: Row = (*full[: len(SCHEMA)], *(full[at] for at in sent_at))
        if not (row[1] or row[2]):
            no_identifier += 1
        elif record["user_id"] in kept_ids:
            duplicates += 1
        else:
            kept_ids.add(record["user_id"] or "")
            rows.append(row)
    reported = {key: columns[key] for key in SCHEMA[1:]}
    for key in EXTRA_REPORT_KEYS:
        column = columns["DOBY" if key == "DOB" else key]
        if any(column) or any(reason is not DropReason.EMPTY for reason in drops[key]):
            reported[key] = column
    report = build_report(
        reported,
        drops,
        dropped_no_identifier=no_identifier,
        duplicate_user_ids=duplicates,
        rows_to_upload=len(rows),
    )
    return PreparedAudience(rows=rows, report=report, schema=(*SCHEMA, *sent))


def _is_hashed(raw: str | None) -> bool:
    return raw is not None and is_sha256_hex(raw.strip())


def _reference_value(
    raw: str | None, normalise: Callable[[str | None], str | DropReason]
) -> str | DropReason:
    if raw is not None and _is_hashed(raw):
        return raw.strip().lower()
    value = normalise(raw)
    return value if isinstance(value, DropReason) else sha256_hex(value)


# --- phone numbers of many countries ---------------------------------------------------------------

# (country, a mobile or landline number as people there write it, the international digits the
# platform hashes), worked out by hand from each country's numbering plan: the trunk prefix goes (0,
# Russia's 8, Argentina's 15 after the area code, which becomes the mobile 9), Italy keeps its 0.
PHONES_BY_COUNTRY: tuple[tuple[str, str, str], ...] = (
    ("GB", "07700 900123", "447700900123"),
    ("US", "(415) 555-2671", "14155552671"),
    ("CA", "604-555-0123", "16045550123"),
    ("AU", "0412 345 678", "61412345678"),
    ("NZ", "021 123 4567", "64211234567"),
    ("IE", "085 123 4567", "353851234567"),
    ("FR", "06 12 34 56 78", "33612345678"),
    ("DE", "0151 23456789", "4915123456789"),
    ("NL", "06 12345678", "31612345678"),
    ("ES", "612 34 56 78", "34612345678"),
    ("IT", "06 1234 5678", "390612345678"),
    ("JP", "090-1234-5678", "819012345678"),
    ("IN", "098765 43210", "919876543210"),
    ("BR", "(11) 91234-5678", "5511912345678"),
    ("MX", "55 1234 5678", "525512345678"),
    ("AR", "011 15-2345-6789", "5491123456789"),
    ("ZA", "082 123 4567", "27821234567"),
    ("NG", "0803 123 4567", "2348031234567"),
    ("CN", "131 2345 6789", "8613123456789"),
    ("KR", "010-1234-5678", "821012345678"),
    ("SE", "070-123 45 67", "46701234567"),
    ("CH", "078 123 45 67", "41781234567"),
    ("PL", "512 345 678", "48512345678"),
    ("AE", "050 123 4567", "971501234567"),
    ("SG", "8123 4567", "6581234567"),
    ("RU", "8 (912) 345-67-89", "79123456789"),
    ("TR", "0532 123 45 67", "905321234567"),
    ("PT", "912 345 678", "351912345678"),
    ("BE", "0470 12 34 56", "32470123456"),
    ("AT", "0664 1234567", "436641234567"),
)
# Countries each read by their own numbering plan, for tests that run every case under many plans.
PLAN_COUNTRIES: tuple[str, ...] = tuple(country.lower() for country, _, _ in PHONES_BY_COUNTRY)


# --- the corpus ---------------------------------------------------------------------------------

_SYLLABLES = [
    "an",
    "ber",
    "cal",
    "do",
    "el",
    "fi",
    "gar",
    "ha",
    "is",
    "jo",
    "ka",
    "li",
    "mo",
    "nor",
    "ra",
    "sen",
]
_UNICODE_FIRST = ["José", "Zoë", "Мария", "李", "Siobhán", "François", "Jose\u0301", "नमस्ते", "Ærin", "İlker"]
_UNICODE_LAST = [
    "O'Brien",
    "Núñez",
    "van der Berg",
    "Smith-Jones",
    "Иванов",
    "王",
    "Ó Súilleabháin",
    "Müller",
]


# Names follow a Zipf-Mandelbrot law, weight (rank + 6) ** -0.91, fitted to the U.S. Census 2010 surname
# table: the most common surname ~0.8 % of people, the top 25 ~9 %, the top 239 a quarter, and the
# ~151,000 surnames with 100 or more bearers ~90 %; the other 10 % share about 6.15 million rarer
# surnames (3.9 million of them reported once), drawn here uniformly. A 200,000-user list then holds
# ~77,000 distinct last names. First names take the same law over 5,000 names (an assumption: the top
# name is then 1.6 % of people, as the most common given names are at about 1-1.5 % of births, and the
# top 1,000 cover 70 %), ~5,000 distinct in 200,000 users. Uniform pools would flatter a memo (few
# distinct values) or defeat it (all distinct); this is what a real list looks like.
NAME_LAW_EXPONENT = 0.91
NAME_LAW_OFFSET = 6
SURNAMES_WITH_100_BEARERS = 151_000
SURNAMES_IN_CENSUS = 6_300_000
SURNAME_TAIL_SHARE = 0.10
FIRST_NAMES = 5_000


def generate_corpus(size: int = CORPUS_SIZE, *, seed: int = 7) -> list[dict[str, str | None]]:
    """``size`` synthetic users in the spec's record shape, with the mess real customer lists have.

    Mostly valid GB/US/AU data; about 5% missing and a few percent invalid values per field, pre-hashed
    values, Unicode names, duplicates and e-mail-shaped user ids. First and last names are drawn from
    the rank-frequency law above, so they repeat as much (and as little) as in a real list.
    """
    rng = random.Random(seed)
    records: list[dict[str, str | None]] = []
    for index in range(size):
        first, last = _first_name(rng), _last_name(rng)
        country = rng.choices(
            ["GB", "US", "AU", " gb", "uk", "CA", None, "xx", "JP", "United States", "U.K."],
            [30, 28, 10, 3, 2, 5, 15, 2, 2, 2, 1],
        )[0]
        records.append(
            {
                "user_id": _user_id(rng, index),
                "email": _email(rng, first, last, index),
                "firstName": _maybe(rng, first, garbage="--"),
                "lastName": _maybe(rng, last, garbage="123"),
                "phone": _phone(rng, country, index),
                "score": f"{rng.random():.4f}",
                "country": sha256_hex("gb") if rng.random() < 0.01 else country,
            }
        )
    return records


@cache
def _name_law(names: int) -> tuple[range, list[float]]:
    """Ranks ``0 .. names - 1`` and their cumulative Zipf-Mandelbrot weights, for ``random.choices``."""
    ranks = range(names)
    weights = ((rank + 1 + NAME_LAW_OFFSET) ** -NAME_LAW_EXPONENT for rank in ranks)
    return ranks, list(itertools.accumulate(weights))


def _first_name(rng: random.Random) -> str:
    if rng.random() < 0.002:
        return rng.choice(_UNICODE_FIRST)
    ranks, cumulative = _name_law(FIRST_NAMES)
    return _ranked_name(rng.choices(ranks, cum_weights=cumulative)[0])


def _last_name(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.002:
        return rng.choice(_UNICODE_LAST)
    if roll < SURNAME_TAIL_SHARE:
        return _ranked_name(rng.randrange(SURNAMES_WITH_100_BEARERS, SURNAMES_IN_CENSUS))
    ranks, cumulative = _name_law(SURNAMES_WITH_100_BEARERS)
    return _ranked_name(rng.choices(ranks, cum_weights=cumulative)[0])


def _ranked_name(rank: int) -> str:
    """The name of frequency rank ``rank``: the rank in bijective base 16, one syllable per digit.

    Every syllable starts with its own letter, so distinct ranks give distinct names.
    """
    syllables: list[str] = []
    number = rank + 1
    while number:
        number -= 1
        number, digit = divmod(number, len(_SYLLABLES))
        syllables.append(_SYLLABLES[digit])
    return "".join(reversed(syllables)).title()


def _maybe(rng: random.Random, value: str, *, garbage: str) -> str | None:
    roll = rng.random()
    if roll < 0.05:
        return None
    if roll < 0.07:
        return garbage
    if roll < 0.08:
        return sha256_hex(value.lower())
    return value


def _user_id(rng: random.Random, index: int) -> str:
    roll = rng.random()
    if roll < 0.01:
        return f"u{max(index - 1, 0)}"  # duplicate of the previous user
    if roll < 0.02:
        return f"customer{index}@shop.example"
    return f"u{index}"


def _email(rng: random.Random, first: str, last: str, index: int) -> str | None:
    roll = rng.random()
    if roll < 0.05:
        return None
    if roll < 0.08:
        return f"{first}.{last}.at.example.com"
    if roll < 0.10:
        return sha256_hex(f"user{index}@example.com").upper()
    return f"  {first}.{last}{index}@Example.com " if roll < 0.2 else f"{first}.{last}{index}@example.com"


def _phone(rng: random.Random, country: str | None, index: int) -> str | None:
    roll = rng.random()
    line = f"{index % 1_000_000:06d}"
    if roll < 0.05:
        return None
    if roll < 0.07:
        return "12345"
    if roll < 0.08:
        return sha256_hex(f"4477009{line}")
    international = roll < 0.4
    match (country or "").strip().upper():
        case "GB" | "UK" | "U.K.":
            return f"+44 (0)7700 9{line[1:3]} {line[3:]}" if international else f"07700 9{line[1:]}"
        case "US" | "CA" | "UNITED STATES":
            return f"+1 (555) {line[:3]}-{line[3:]}0" if international else f"555-{line[:3]}-{line[3:]}0"
        case "AU":
            return f"+61 412 {line[:3]} {line[3:]}" if international else f"0412 {line[:3]} {line[3:]}"
        case _:
            return f"+44 7700 9{line[1:]}" if international else f"0{line}"  # national with no known country
