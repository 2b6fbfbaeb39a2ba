"""Turn audience users into upload rows: the fast path of normalising and hashing.

Applies the rules of ``shared.audiences.identifiers`` one column at a time: each column is a tight
loop with its helpers bound to locals, precompiled patterns, ``str.translate`` tables and one
``hashlib.sha256`` per value. Names and countries repeat a lot across customers, so their results are
memoised for the duration of one call. The straightforward per-record version lives in
``benchmarks/audience_hashing.py`` and a test keeps both outputs identical.
"""

from __future__ import annotations

import gc
import hashlib
import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from shared.audiences.identifiers import (
    DATA_PROCESSING_SCHEMA,
    DIALING_RULES,
    E164_MAX_LENGTH,
    E164_MIN_LENGTH,
    EMAIL_DOMAIN,
    EMAIL_LOCAL_PART,
    EMAIL_MAX_LENGTH,
    GENERIC_INTERNATIONAL_PREFIX,
    RULES_BY_CALLING_CODE,
    SCHEMA,
    VALUE_SCHEMA_KEY,
    AudienceUser,
    DialingRule,
    DropReason,
    data_processing_options,
    extern_id,
    is_sha256_hex,
    normalise_country,
    normalise_name,
)
from shared.audiences.quality import QualityReport, build_report
from shared.errors import ValidationFailed

# One upload row: six strings in identifiers.SCHEMA order ("" for a missing key), then, when the
# audience carries Limited Data Use flags, the three DATA_PROCESSING_SCHEMA values (a list and two ints),
# then, for a value-based seed, the customer's value (a float, or "" for none).
Row = tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class IdentifierColumns:
    """Audience users as columns (one sequence per field, same length), the fast path's input."""

    user_ids: Sequence[str]
    emails: Sequence[str | None]
    phones: Sequence[str | None]
    first_names: Sequence[str | None]
    last_names: Sequence[str | None]
    countries: Sequence[str | None]
    # Limited Data Use (docs/platform-notes.md §3.8): each user's flag and state, when known.
    limited_data_use: Sequence[bool | None] | None = None
    states: Sequence[str | None] | None = None
    # A value-based seed (docs/platform-notes.md §4.1): each user's value (a number >= 0, or None).
    values: Sequence[float | None] | None = None

    def __post_init__(self) -> None:
        lengths = {len(column) for column in self._all()}
        if len(lengths) > 1:
            raise ValueError(f"identifier columns differ in length: {sorted(lengths)}")

    def __len__(self) -> int:
        return len(self.user_ids)

    def _all(self) -> tuple[Sequence[object], ...]:
        optional = tuple(
            column for column in (self.limited_data_use, self.states, self.values) if column is not None
        )
        return (
            self.user_ids,
            self.emails,
            self.phones,
            self.first_names,
            self.last_names,
            self.countries,
            *optional,
        )

    @property
    def carries_limited_data_use(self) -> bool:
        """Whether the users come with Limited Data Use flags (the column is given, even if some
        users leave it blank), so every row carries the data processing options."""
        return self.limited_data_use is not None

    @classmethod
    def from_records(cls, records: Iterable[Mapping[str, str | None]]) -> IdentifierColumns:
        """Columns of plain records keyed by the spec's names (``user_id``, ``email``, ``firstName``, ...).

        The cheap route for trusted, already shaped data (e.g. a CSV read in-process); missing keys are
        missing values.
        """
        records = list(records)
        return cls(
            user_ids=[record["user_id"] or "" for record in records],
            emails=[record.get("email") for record in records],
            phones=[record.get("phone") for record in records],
            first_names=[record.get("firstName") for record in records],
            last_names=[record.get("lastName") for record in records],
            countries=[record.get("country") for record in records],
        )

    @classmethod
    def from_users(
        cls, users: Iterable[AudienceUser], values: Sequence[float | None] | None = None
    ) -> IdentifierColumns:
        """Columns of already validated ``users``, in their order; ``values`` (aligned with them) makes
        the rows a value-based seed's."""
        users = list(users)
        flags = [user.limited_data_use for user in users]
        return cls(
            user_ids=[user.user_id for user in users],
            emails=[user.email for user in users],
            phones=[user.phone for user in users],
            first_names=[user.first_name for user in users],
            last_names=[user.last_name for user in users],
            countries=[user.country for user in users],
            limited_data_use=flags if any(flag is not None for flag in flags) else None,
            states=[user.state for user in users],
            values=values,
        )


@dataclass(frozen=True, slots=True)
class PreparedAudience:
    """Rows ready to upload (``SCHEMA`` order, ``""`` for a missing key) and the report describing them."""

    rows: list[Row]
    report: QualityReport
    schema: tuple[str, ...] = SCHEMA


def prepare_audience(
    users: Iterable[AudienceUser],
    *,
    default_country: str | None = None,
    values: Sequence[float | None] | None = None,
) -> PreparedAudience:
    """Normalise and hash ``users`` into upload rows (with ``values``, a value-based seed's); see
    :func:`prepare_columns`."""
    return prepare_columns(IdentifierColumns.from_users(users, values), default_country=default_country)


def prepare_columns(columns: IdentifierColumns, *, default_country: str | None = None) -> PreparedAudience:
    """Normalise and hash identifier columns into upload rows plus a quality report.

    ``default_country`` (alpha-2, the store's country) gives national phone numbers their calling
    code when the customer's own country is missing or invalid; it is never sent as the customer's
    COUNTRY. Records without a usable e-mail or phone are dropped, and of several records with the
    same user_id only the first usable one is kept; both are counted in the report. When any user
    carries a Limited Data Use flag, every row also carries the DATA_PROCESSING_SCHEMA columns
    (``identifiers.data_processing_options``) and the schema says so. With ``columns.values`` (a
    value-based seed), every row ends with the customer's value (``""`` for none) under
    ``LOOKALIKE_VALUE``.
    Raises ``ValidationFailed`` for an unknown ``default_country`` or a value that is not a finite
    number >= 0.
    """
    store_country = _store_country(default_country)
    drops: dict[str, Counter[DropReason]] = {key: Counter() for key in SCHEMA[1:]}
    with _cyclic_gc_paused():
        countries, phone_plans = _country_column(columns.countries, store_country, drops["COUNTRY"])
        prepared = {
            "EMAIL": _email_column(columns.emails, drops["EMAIL"]),
            "PHONE": _phone_column(columns.phones, phone_plans, drops["PHONE"]),
            "FN": _name_column(columns.first_names, drops["FN"]),
            "LN": _name_column(columns.last_names, drops["LN"]),
            "COUNTRY": countries,
        }
        extra = _data_processing_columns(columns) if columns.carries_limited_data_use else []
        if columns.values is not None:
            extra = [*extra, _value_column(columns.values)]
        rows, no_identifier, duplicates = _assemble_rows(columns.user_ids, prepared, extra)
    report = build_report(
        prepared,
        drops,
        dropped_no_identifier=no_identifier,
        duplicate_user_ids=duplicates,
        rows_to_upload=len(rows),
    )
    schema = SCHEMA + DATA_PROCESSING_SCHEMA if columns.carries_limited_data_use else SCHEMA
    if columns.values is not None:
        schema = (*schema, VALUE_SCHEMA_KEY)
    return PreparedAudience(rows=rows, report=report, schema=schema)


def _value_column(values: Sequence[float | None]) -> list[float | str]:
    """The LOOKALIKE_VALUE column: each value as a number, ``""`` for a customer without one."""
    out: list[float | str] = []
    for value in values:
        if value is None:
            out.append("")
        elif (
            isinstance(value, int | float)
            and not isinstance(value, bool)
            and math.isfinite(value)
            and value >= 0
        ):
            out.append(float(value))
        else:
            raise ValidationFailed(
                "A customer value must be a number of at least 0.",
                field="valueColumn",
                remedy="Give each customer a value of 0 or more (or leave it blank for no value).",
            )
    return out


def _data_processing_columns(columns: IdentifierColumns) -> list[list[Any]]:
    """The three Limited Data Use columns of every user, in ``DATA_PROCESSING_SCHEMA`` order."""
    flags = columns.limited_data_use or [None] * len(columns)
    states = columns.states or [None] * len(columns)
    options = [
        data_processing_options(flag, country, state)
        for flag, country, state in zip(flags, columns.countries, states, strict=True)
    ]
    return [list(column) for column in zip(*options, strict=True)] if options else [[], [], []]


@contextmanager
def _cyclic_gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector, which has nothing to find here.

    Preparing allocates a few hundred thousand tuples and dicts, none in a reference cycle, and every
    700 allocations the collector would walk the young ones, and now and then the whole heap (the
    caller's input included). Reference counting still frees everything as usual.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _store_country(default_country: str | None) -> str | None:
    if default_country is None:
        return None
    country = normalise_country(default_country)
    if isinstance(country, DropReason):
        raise ValidationFailed(
            "The store's default country is not an ISO 3166-1 alpha-2 code.",
            field="default_country",
            remedy="Use a two-letter country code such as GB, US, CA or AU.",
        )
    return country


_EMAIL_LOCAL_PART = re.compile(EMAIL_LOCAL_PART)
_EMAIL_DOMAIN = re.compile(EMAIL_DOMAIN)


def _email_column(values: Sequence[str | None], drops: Counter[DropReason]) -> list[str]:
    sha256 = hashlib.sha256
    local_part_valid = _EMAIL_LOCAL_PART.fullmatch
    domain_valid = _EMAIL_DOMAIN.fullmatch
    max_length = EMAIL_MAX_LENGTH
    # domain -> whether it matches EMAIL_DOMAIN; a list has few distinct domains.
    domains: dict[str, bool] = {}
    invalid = 0
    out: list[str] = []
    append = out.append
    for raw in values:
        email = raw.strip().lower() if raw else ""
        if not email:
            append("")
            continue
        local, at, domain = email.partition("@")
        if at:
            # EMAIL_PATTERN is local-part "@" domain and neither half matches "@", so checking the halves
            # on either side of the first "@" is the same test. A plain dotted local part (the usual
            # "first.last") is checked with str methods; anything else goes to the regex.
            if (known := domains.get(domain)) is None:
                known = domains[domain] = domain_valid(domain) is not None
            if known and len(email) <= max_length:
                plain = local.replace(".", "")
                if (
                    plain.isalnum()
                    and plain.isascii()
                    and local[0] != "."
                    and local[-1] != "."
                    and ".." not in local
                ) or local_part_valid(local) is not None:
                    append(sha256(email.encode()).hexdigest())
                    continue
        elif len(email) == 64 and is_sha256_hex(email):  # a digest has no "@"
            append(email)
            continue
        invalid += 1
        append("")
    if invalid:
        drops[DropReason.INVALID_EMAIL] += invalid
    return out


@dataclass(frozen=True, slots=True, eq=False)
class _PhonePlan:
    """A ``DialingRule`` as bytes, for the phone column's loop (which works on the UTF-8 bytes).

    Compared and hashed by identity (each country's plan is one module-level object), so it is a cheap
    part of the phone column's dictionary keys.
    """

    calling_code: bytes
    trunk_prefix: bytes
    # The country's own international prefix first, then the ITU "00" (see phone_from_digits).
    international_prefixes: tuple[bytes, ...]
    min_national_length: int
    max_national_length: int

    @classmethod
    def of(cls, rule: DialingRule) -> _PhonePlan:
        prefixes = dict.fromkeys((rule.international_prefix, GENERIC_INTERNATIONAL_PREFIX))
        return cls(
            rule.calling_code.encode(),
            rule.trunk_prefix.encode(),
            tuple(prefix.encode() for prefix in prefixes),
            rule.min_national_length,
            rule.max_national_length,
        )


_PHONE_PLANS: dict[str, _PhonePlan] = {
    country: _PhonePlan.of(rule) for country, rule in DIALING_RULES.items()
}
# Every string of 1-3 digits -> the plan whose calling code starts it (codes are prefix-free), so an
# international number's country is one dictionary lookup on its first three digits.
_PLANS_BY_LEADING_DIGITS: dict[bytes, _PhonePlan] = {
    digits.encode(): _PhonePlan.of(rule)
    for digits in (f"{n:0{width}d}" for width in (1, 2, 3) for n in range(10**width))
    if (
        rule := next(
            (
                RULES_BY_CALLING_CODE[d]
                for d in (digits[:1], digits[:2], digits)
                if d in RULES_BY_CALLING_CODE
            ),
            None,
        )
    )
}
# Deleting every byte but ASCII 0-9 from the UTF-8 bytes keeps exactly the ASCII digits: the bytes of a
# non-ASCII character are all >= 0x80, so they go whole.
_NON_DIGIT_BYTES = bytes(byte for byte in range(256) if not 0x30 <= byte <= 0x39)
_GENERIC_PREFIXES = (GENERIC_INTERNATIONAL_PREFIX.encode(),)


# Phone numbers are prepared by their shape: what the rules do to a number (strip an international
# prefix, leading zeros or the trunk prefix, put a calling code first, or drop it) depends only on its
# country's plan, whether it was written with "+", how many digits it has and its first few digits.
# Those repeat across a list (same countries, same lengths, same area codes), so each shape is worked
# out once per call and a number then costs a dictionary lookup, a slice and its SHA-256.
_SHAPE_DIGITS = 6  # longest prefix "0011" or calling code and trunk prefix (4 digits), and then some


# What the rules do to a number of a shape: keep ``digits[cut:]`` behind ``prefix``, or drop it.
_Shape = tuple[int, bytes, DropReason | None]


def _phone_column(
    values: Sequence[str | None], plans: Sequence[_PhonePlan | None], drops: Counter[DropReason]
) -> list[str]:
    """Hashed international numbers; ``plans`` holds each record's country (None when unknown).

    The rules of ``identifiers.phone_from_digits`` on the UTF-8 bytes, looked up by the number's shape
    (see ``_phone_shape``): the number is hashed as the bytes it was built from, never decoded.
    """
    sha256 = hashlib.sha256
    non_digits = _NON_DIGIT_BYTES
    head = _SHAPE_DIGITS
    shape_of = _phone_shape
    shapes: dict[tuple[_PhonePlan | None, bool, int, bytes], _Shape] = {}
    dropped: Counter[DropReason] = Counter()
    out: list[str] = []
    append = out.append
    for raw, plan in zip(values, plans, strict=True):
        stripped = raw.strip() if raw else ""
        if not stripped:
            append("")
            continue
        if len(stripped) == 64 and is_sha256_hex(stripped):
            append(stripped.lower())
            continue
        digits = stripped.encode().translate(None, non_digits)
        key = (plan, stripped[0] == "+", len(digits), digits[:head])
        if (shape := shapes.get(key)) is None:
            shape = shape_of(digits[:head], len(digits), key[1], plan)
            if shape is None:  # the first digits do not decide it (a long run of zeros): this number only
                shape = shape_of(digits, len(digits), key[1], plan)
                assert shape is not None, "the whole number always decides"
            else:
                shapes[key] = shape
        cut, prefix, reason = shape
        if reason is None:
            append(sha256(prefix + digits[cut:]).hexdigest())
        else:
            dropped[reason] += 1
            append("")
    drops.update(dropped)
    return out


def _phone_shape(head: bytes, length: int, international: bool, plan: _PhonePlan | None) -> _Shape | None:
    """What ``identifiers.phone_from_digits`` does to every ``length``-digit number starting with ``head``.

    ``international`` means written with "+"; ``plan`` is the record's country. Returns None when
    ``head`` (shorter than the number) does not decide it, which only a run of zeros reaching its end can
    cause: every other step looks at most 4 digits past the zeros it strips. With ``head`` the whole
    number it always decides.
    """
    if not length:
        return (0, b"", DropReason.PHONE_TOO_SHORT)
    whole = len(head) == length
    cut = 0
    if not international:
        for international_prefix in plan.international_prefixes if plan is not None else _GENERIC_PREFIXES:
            if head.startswith(international_prefix):
                cut = len(international_prefix)
                international = True
                break
    prefix = b""
    if international:
        rest = head[cut:]
        number = rest.lstrip(b"0")
        if not whole and len(number) < 3:
            return None  # the zeros, or the 3 digits that name the calling code, may go on past head
        cut += len(rest) - len(number)
        number_plan = _PLANS_BY_LEADING_DIGITS.get(number[:3])
        if number_plan is not None:
            prefix = number_plan.calling_code
            after_code = number[len(prefix) :]
            national = after_code.lstrip(b"0")
            if not whole and not national:
                return None
            cut += len(prefix) + len(after_code) - len(national)
    elif plan is not None:
        number_plan = plan
        code, trunk = plan.calling_code, plan.trunk_prefix
        if not (
            head.startswith(code)
            and plan.min_national_length <= length - len(code) <= plan.max_national_length
            and not (trunk and head[len(code) :].startswith(trunk))
        ):
            # A national number: drop leading zeros and the trunk prefix, put the calling code first.
            national = head.lstrip(b"0")
            if not whole and not national:
                return None
            cut = len(head) - len(national)
            if trunk and national.startswith(trunk):
                cut += len(trunk)
            prefix = code
        # else written without "+" but already starting with the calling code: kept as it is
    else:
        number_plan = _PLANS_BY_LEADING_DIGITS.get(head[:3])
        if number_plan is None or not (
            number_plan.min_national_length
            <= length - len(number_plan.calling_code)
            <= number_plan.max_national_length
            and not (
                number_plan.trunk_prefix
                and head[len(number_plan.calling_code) :].startswith(number_plan.trunk_prefix)
            )
        ):
            return (0, b"", DropReason.UNKNOWN_COUNTRY_CODE)
    number_length = len(prefix) + length - cut
    if number_plan is not None:
        number_length -= len(number_plan.calling_code)
        low, high = number_plan.min_national_length, number_plan.max_national_length
    else:
        low, high = E164_MIN_LENGTH, E164_MAX_LENGTH
    if number_length < low:
        return (0, b"", DropReason.PHONE_TOO_SHORT)
    if number_length > high:
        return (0, b"", DropReason.PHONE_TOO_LONG)
    return (cut, prefix, None)


def _name_column(values: Sequence[str | None], drops: Counter[DropReason]) -> list[str]:
    # Names repeat, so each distinct value is prepared once; counting and mapping back run in C.
    hashed: dict[str | None, str] = {}
    for raw, count in Counter(values).items():
        result = _prepared_name(raw)
        if isinstance(result, DropReason):
            drops[result] += count
            hashed[raw] = ""
        else:
            hashed[raw] = result
    return list(map(hashed.__getitem__, values))


# Bytes that are not lower-case ASCII letters: for an ASCII name, NFC changes nothing and the only
# letters are a-z after lower-casing, so deleting these bytes is normalise_name without the Unicode work.
_NOT_ASCII_LOWER_LETTERS = bytes(byte for byte in range(256) if not 0x61 <= byte <= 0x7A)


def _prepared_name(raw: str | None) -> str | DropReason:
    if raw is None or not (stripped := raw.strip()):
        return DropReason.EMPTY
    if len(stripped) == 64 and is_sha256_hex(stripped):
        return stripped.lower()
    if raw.isascii():
        letters = raw.lower().encode().translate(None, _NOT_ASCII_LOWER_LETTERS)
        return hashlib.sha256(letters).hexdigest() if letters else DropReason.INVALID_NAME
    name = normalise_name(raw)
    return name if isinstance(name, DropReason) else hashlib.sha256(name.encode()).hexdigest()


def _country_column(
    values: Sequence[str | None], store_country: str | None, drops: Counter[DropReason]
) -> tuple[list[str], list[_PhonePlan | None]]:
    """Hashed COUNTRY values, and the dialing plan each record's phone number is read with.

    The customer's own country wins, even when there is no dialing rule for it; the store's country
    only stands in when the customer's is missing or invalid.
    """
    store_plan = _PHONE_PLANS.get(store_country) if store_country else None
    hashed: dict[str | None, str] = {}
    plans: dict[str | None, _PhonePlan | None] = {}
    for raw, count in Counter(values).items():
        hashed[raw], code, dropped = _prepared_country(raw)
        plans[raw] = _PHONE_PLANS.get(code) if code else store_plan
        if dropped is not None:
            drops[dropped] += count
    return list(map(hashed.__getitem__, values)), list(map(plans.__getitem__, values))


def _prepared_country(raw: str | None) -> tuple[str, str | None, DropReason | None]:
    if raw is not None and is_sha256_hex(stripped := raw.strip()):
        return stripped.lower(), None, None
    code = normalise_country(raw)
    if isinstance(code, DropReason):
        return "", None, code
    return hashlib.sha256(code.encode()).hexdigest(), code, None


def _assemble_rows(
    user_ids: Sequence[str], prepared: dict[str, list[str]], extra: Sequence[Sequence[Any]] = ()
) -> tuple[list[Row], int, int]:
    """Rows in SCHEMA order (then the ``extra`` columns), with the number dropped for having no match
    key and as duplicates.

    One pass: on 100,000+ rows, walking the columns once beats several whole-column C passes (measured),
    as each pass misses the cache on every value again.
    """
    extern_ids = [extern_id(user_id) if "@" in user_id else user_id for user_id in user_ids]
    rows: list[Row] = []
    append = rows.append
    kept_ids: set[str] = set()
    add_kept = kept_ids.add
    no_identifier = duplicates = 0
    # zip builds each row tuple in C; a row is kept as built, never copied.
    for user_id, row in zip(
        user_ids,
        zip(
            extern_ids,
            prepared["EMAIL"],
            prepared["PHONE"],
            prepared["FN"],
            prepared["LN"],
            prepared["COUNTRY"],
            *extra,
            strict=True,
        ),
        strict=True,
    ):
        if not (row[1] or row[2]):
            no_identifier += 1
        elif user_id in kept_ids:
            duplicates += 1
        else:
            add_kept(user_id)
            append(row)
    return rows, no_identifier, duplicates


# --- one value at a time, for the bulk path (shared.activation.hashing) ----------------------------
# The engine applies the rules above to the common cases in SQL and asks these for what it cannot
# decide, so both paths run the very code that prepare_columns runs.


def prepared_email(raw: str) -> tuple[str, DropReason | None]:
    """A non-blank e-mail cell as ``prepare_columns`` sends it: its hash (or the digest it is), or
    ``""`` and why not."""
    drops: Counter[DropReason] = Counter()
    (value,) = _email_column([raw], drops)
    return value, next(iter(drops), None)


def prepared_name(raw: str | None) -> tuple[str, DropReason | None]:
    """A first or last name cell as ``prepare_columns`` sends it: its hash, or ``""`` and why not."""
    result = _prepared_name(raw)
    return ("", result) if isinstance(result, DropReason) else (result, None)


def prepared_country(
    raw: str | None, store_country: str | None
) -> tuple[str, DropReason | None, str | None, str | None]:
    """A country cell as ``prepare_columns`` sends it (hash or ``""``, why not), its ISO code, and the
    country whose dialing plan reads the user's phone (None: no plan), as ``_country_column`` picks it:
    the customer's own country when readable, even without a plan, else the store's."""
    value, code, reason = _prepared_country(raw)
    if raw is None:
        reason = DropReason.EMPTY
    plan_country = code if code else store_country
    plan = plan_country if plan_country in _PHONE_PLANS else None
    return value, reason, code, plan


def store_country(default_country: str | None) -> str | None:
    """The store's country as the rules read it (``ValidationFailed`` for an unknown one)."""
    return _store_country(default_country)


def phone_shape(
    digits: str, length: int, international: bool, plan: str | None
) -> tuple[int, str, DropReason | None] | None:
    """What the dialing rules do to every ``length``-digit number starting with ``digits`` (a head of
    up to six digits, or the whole number), for a user whose plan is ``plan``'s country: keep
    ``number[cut:]`` behind the calling code ``prefix``, or drop it for the reason. None when the head
    does not decide it (see ``_phone_shape``)."""
    shape = _phone_shape(digits.encode(), length, international, _PHONE_PLANS[plan] if plan else None)
    if shape is None:
        return None
    cut, prefix, reason = shape
    return cut, prefix.decode(), reason
