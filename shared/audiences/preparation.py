"""Turn audience users into upload rows: the fast path of normalising and hashing.

Applies the rules of ``shared.audiences.identifiers`` one column at a time: each column is a tight
loop with its helpers bound to locals, precompiled patterns, ``str.translate`` tables and one
``hashlib.sha256`` per value. Names and countries repeat a lot across customers, so their results are
memoised for the duration of one call. The straightforward per-record version lives in
``benchmarks/audience_hashing.py`` and a test keeps both outputs identical.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from shared.audiences.identifiers import (
    DIALING_RULES,
    EMAIL_MAX_LENGTH,
    EMAIL_PATTERN,
    SCHEMA,
    AudienceUser,
    DropReason,
    extern_id,
    is_sha256_hex,
    normalise_country,
    normalise_name,
    phone_digits,
    phone_from_digits,
)
from shared.audiences.quality import QualityReport, build_report
from shared.errors import ValidationFailed

# One upload row: six strings in identifiers.SCHEMA order ("" for a missing key).
Row = tuple[str, str, str, str, str, str]


@dataclass(frozen=True, slots=True)
class IdentifierColumns:
    """Audience users as columns (one sequence per field, same length), the fast path's input."""

    user_ids: Sequence[str]
    emails: Sequence[str | None]
    phones: Sequence[str | None]
    first_names: Sequence[str | None]
    last_names: Sequence[str | None]
    countries: Sequence[str | None]

    def __post_init__(self) -> None:
        lengths = {len(column) for column in self._all()}
        if len(lengths) > 1:
            raise ValueError(f"identifier columns differ in length: {sorted(lengths)}")

    def __len__(self) -> int:
        return len(self.user_ids)

    def _all(self) -> tuple[Sequence[str | None], ...]:
        return (self.user_ids, self.emails, self.phones, self.first_names, self.last_names, self.countries)

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
    def from_users(cls, users: Iterable[AudienceUser]) -> IdentifierColumns:
        """Columns of already validated ``users``, in their order."""
        users = list(users)
        return cls(
            user_ids=[user.user_id for user in users],
            emails=[user.email for user in users],
            phones=[user.phone for user in users],
            first_names=[user.first_name for user in users],
            last_names=[user.last_name for user in users],
            countries=[user.country for user in users],
        )


@dataclass(frozen=True, slots=True)
class PreparedAudience:
    """Rows ready to upload (``SCHEMA`` order, ``""`` for a missing key) and the report describing them."""

    rows: list[Row]
    report: QualityReport
    schema: tuple[str, ...] = SCHEMA


def prepare_audience(
    users: Iterable[AudienceUser], *, default_country: str | None = None
) -> PreparedAudience:
    """Normalise and hash ``users`` into upload rows; see :func:`prepare_columns`."""
    return prepare_columns(IdentifierColumns.from_users(users), default_country=default_country)


def prepare_columns(columns: IdentifierColumns, *, default_country: str | None = None) -> PreparedAudience:
    """Normalise and hash identifier columns into upload rows plus a quality report.

    ``default_country`` (alpha-2, the store's country) gives national phone numbers their calling
    code when the customer's own country is missing or invalid; it is never sent as the customer's
    COUNTRY. Records without a usable e-mail or phone are dropped, and of several records with the
    same user_id only the first usable one is kept; both are counted in the report.
    Raises ``ValidationFailed`` for an unknown ``default_country``.
    """
    store_country = _store_country(default_country)
    drops: dict[str, Counter[DropReason]] = {key: Counter() for key in SCHEMA[1:]}
    countries, phone_countries = _country_column(columns.countries, drops["COUNTRY"])
    prepared = {
        "EMAIL": _email_column(columns.emails, drops["EMAIL"]),
        "PHONE": _phone_column(columns.phones, phone_countries, store_country, drops["PHONE"]),
        "FN": _name_column(columns.first_names, drops["FN"]),
        "LN": _name_column(columns.last_names, drops["LN"]),
        "COUNTRY": countries,
    }
    rows, no_identifier, duplicates = _assemble_rows(columns.user_ids, prepared)
    report = build_report(
        prepared,
        drops,
        dropped_no_identifier=no_identifier,
        duplicate_user_ids=duplicates,
        rows_to_upload=len(rows),
    )
    return PreparedAudience(rows=rows, report=report)


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


def _email_column(values: Sequence[str | None], drops: Counter[DropReason]) -> list[str]:
    sha256 = hashlib.sha256
    valid = EMAIL_PATTERN.fullmatch
    max_length = EMAIL_MAX_LENGTH
    out: list[str] = []
    append = out.append
    for raw in values:
        email = raw.strip().lower() if raw else ""
        if not email:
            append("")
        elif len(email) == 64 and is_sha256_hex(email):
            append(email)
        elif len(email) > max_length or valid(email) is None:
            drops[DropReason.INVALID_EMAIL] += 1
            append("")
        else:
            append(sha256(email.encode()).hexdigest())
    return out


def _phone_column(
    values: Sequence[str | None],
    countries: Sequence[str | None],
    store_country: str | None,
    drops: Counter[DropReason],
) -> list[str]:
    sha256 = hashlib.sha256
    rules = DIALING_RULES
    store_rule = rules.get(store_country) if store_country else None
    digits_of = phone_digits
    from_digits = phone_from_digits
    out: list[str] = []
    append = out.append
    for raw, country in zip(values, countries, strict=True):
        stripped = raw.strip() if raw else ""
        if not stripped:
            append("")
            continue
        if len(stripped) == 64 and is_sha256_hex(stripped):
            append(stripped.lower())
            continue
        # The customer's own country wins, even when we have no dialing rule for it.
        rule = rules.get(country) if country else store_rule
        number = from_digits(digits_of(stripped), stripped[0] == "+", rule)
        if isinstance(number, DropReason):
            drops[number] += 1
            append("")
        else:
            append(sha256(number.encode()).hexdigest())
    return out


def _name_column(values: Sequence[str | None], drops: Counter[DropReason]) -> list[str]:
    # raw value -> hashed name, or why it was dropped; names repeat, so each is prepared once per call.
    seen: dict[str | None, str | DropReason] = {}
    prepare = _prepared_name
    out: list[str] = []
    append = out.append
    for raw in values:
        result = seen.get(raw)
        if result is None:
            result = seen[raw] = prepare(raw)
        if isinstance(result, DropReason):
            drops[result] += 1
            append("")
        else:
            append(result)
    return out


def _prepared_name(raw: str | None) -> str | DropReason:
    if raw is not None and is_sha256_hex(stripped := raw.strip()):
        return stripped.lower()
    name = normalise_name(raw)
    return name if isinstance(name, DropReason) else hashlib.sha256(name.encode()).hexdigest()


def _country_column(
    values: Sequence[str | None], drops: Counter[DropReason]
) -> tuple[list[str], list[str | None]]:
    """Hashed COUNTRY values, and the plain code of each record for phone numbers (None when unknown)."""
    seen: dict[str | None, tuple[str, str | None, DropReason | None]] = {}
    hashed: list[str] = []
    plain: list[str | None] = []
    for raw in values:
        result = seen.get(raw)
        if result is None:
            result = seen[raw] = _prepared_country(raw)
        hashed.append(result[0])
        plain.append(result[1])
        if result[2] is not None:
            drops[result[2]] += 1
    return hashed, plain


def _prepared_country(raw: str | None) -> tuple[str, str | None, DropReason | None]:
    if raw is not None and is_sha256_hex(stripped := raw.strip()):
        return stripped.lower(), None, None
    code = normalise_country(raw)
    if isinstance(code, DropReason):
        return "", None, code
    return hashlib.sha256(code.encode()).hexdigest(), code, None


def _assemble_rows(user_ids: Sequence[str], prepared: dict[str, list[str]]) -> tuple[list[Row], int, int]:
    """Rows in SCHEMA order, with the number dropped for having no match key and as duplicates."""
    extern_ids = [extern_id(user_id) if "@" in user_id else user_id for user_id in user_ids]
    rows: list[Row] = []
    append = rows.append
    kept_ids: set[str] = set()
    add_kept = kept_ids.add
    no_identifier = duplicates = 0
    # zip builds each row tuple in C; a row is kept as built, never copied.
    for row in zip(
        extern_ids,
        prepared["EMAIL"],
        prepared["PHONE"],
        prepared["FN"],
        prepared["LN"],
        prepared["COUNTRY"],
        strict=True,
    ):
        if not (row[1] or row[2]):
            no_identifier += 1
        elif row[0] in kept_ids:
            # EXTERN_ID is a deterministic function of user_id, so equal ids mean equal user_ids.
            duplicates += 1
        else:
            add_kept(row[0])
            append(row)
    return rows, no_identifier, duplicates
