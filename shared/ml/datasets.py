"""Load a merchant's customers, products and orders from CSV or JSON Lines.

Each file is validated record by record against a pydantic model. Every bad record is collected and the
whole file is rejected with one :class:`~shared.errors.ValidationFailed` whose ``details["errors"]``
lists ``{"file", "row", "field", "reason"}`` for each problem: a merchant fixes the file once instead of
once per error, and a half-loaded file never reaches training. ``row`` is the line number in the file
(for CSV the header is row 1, so the first record is row 2), which is what an editor shows.

Reasons never echo the offending value: customer files hold e-mails, names and phone numbers, and error
details end up in logs and API responses.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    field_validator,
)
from pydantic_core import PydanticCustomError

from shared.errors import ValidationFailed

FileFormat = Literal["csv", "jsonl"]
Identifier = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=256)]
OptionalText = Annotated[str | None, StringConstraints(strip_whitespace=True, max_length=256)]

# How many problems the error message spells out; ``details`` always holds all of them.
_MESSAGE_ERRORS = 5


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)


class OrderRecord(_Record):
    """One order line: a user bought ``quantity`` units of a product for ``amount`` at ``timestamp``."""

    order_id: Identifier
    user_id: Identifier
    product_id: Identifier
    quantity: int = Field(ge=1, le=100_000)
    amount: float = Field(ge=0, allow_inf_nan=False)
    timestamp: datetime

    @field_validator("timestamp")
    @classmethod
    def _utc(cls, value: datetime) -> datetime:
        # ISO 8601 without an offset is read as UTC so that all times compare.
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class CustomerRecord(_Record):
    """A customer; every field but ``user_id`` is optional (camelCase name columns are accepted)."""

    user_id: Identifier
    email: OptionalText = None
    first_name: OptionalText = Field(default=None, validation_alias=AliasChoices("first_name", "firstName"))
    last_name: OptionalText = Field(default=None, validation_alias=AliasChoices("last_name", "lastName"))
    phone: OptionalText = None
    country: Annotated[
        str | None, StringConstraints(strip_whitespace=True, to_upper=True, pattern=r"^[A-Za-z]{2}$")
    ] = None
    # Limited Data Use (docs/platform-notes.md §3.8): whether the customer asked for it (true/false,
    # 1/0, yes/no; blank: not flagged) and their state or region (``CA`` for California).
    limited_data_use: bool | None = None
    state: OptionalText = None
    # Whether the customer agreed to marketing (same words as limited_data_use; blank: not flagged). A
    # customer who said no is never sent to the platform as a conversion event (issue 21, item 5).
    marketing_consent: bool | None = None
    # The other match keys (docs/platform-notes.md §3.7; normalised when an audience is uploaded): the
    # date of birth as YYYY-MM-DD, the gender in words or letters, the id the shop's pixel and server
    # events carry for the customer (sent as EXTERN_ID instead of user_id), a mobile advertiser id.
    city: OptionalText = None
    postcode: OptionalText = Field(
        default=None, validation_alias=AliasChoices("postcode", "zip", "postal_code")
    )
    date_of_birth: str | None = Field(
        default=None, validation_alias=AliasChoices("date_of_birth", "dateOfBirth", "birthday")
    )
    gender: OptionalText = None
    external_id: OptionalText = Field(
        default=None, validation_alias=AliasChoices("external_id", "externalId")
    )
    madid: OptionalText = Field(
        default=None, validation_alias=AliasChoices("madid", "mobile_advertiser_id", "advertising_id")
    )

    @field_validator("country", mode="before")
    @classmethod
    def _country(cls, value: object) -> object:
        # A country written as a name or a common form ("United States", "USA", "U.K.") is read as its
        # ISO 3166 alpha-2 code, as the sync's engine reads it (country_codes.sql); anything else is
        # left for the pattern to refuse.
        if isinstance(value, str) and len(value.strip()) != 2:
            from shared.countries import country_code  # pycountry's tables: only for such a value

            if code := country_code(value):
                return code.upper()
        return value

    @field_validator("date_of_birth")
    @classmethod
    def _date_of_birth(cls, value: str | None) -> str | None:
        # A real date, written YYYY-MM-DD, from 1900 to today (the platform's DOBY range).
        if value is None or not (text := value.strip()):
            return None
        try:
            born = date.fromisoformat(text) if len(text) == 10 and text[4] == "-" and text[7] == "-" else None
        except ValueError:
            born = None
        if born is None or born.year < 1900 or born > datetime.now(UTC).date():
            raise PydanticCustomError("date_of_birth", "must be a date of birth written YYYY-MM-DD")
        return born.isoformat()


class ProductRecord(_Record):
    """A product in the catalogue."""

    product_id: Identifier
    name: OptionalText = None
    category: OptionalText = None
    price: float | None = Field(default=None, ge=0, allow_inf_nan=False)


@dataclass(frozen=True)
class ShopData:
    """A merchant's validated data set."""

    customers: list[CustomerRecord]
    products: list[ProductRecord]
    orders: list[OrderRecord]


_KEY_FIELD: dict[type[_Record], str] = {
    OrderRecord: "",  # one order has several lines, so order_id is not unique
    CustomerRecord: "user_id",
    ProductRecord: "product_id",
}


def load_records[R: _Record](
    source: bytes | str | Path,
    model: type[R],
    *,
    file_name: str | None = None,
    file_format: FileFormat | None = None,
) -> list[R]:
    """Parse and validate every record of one file.

    ``source`` is a path or the file's bytes. ``file_format`` defaults to the file name's suffix
    (``.csv``, ``.jsonl``/``.ndjson``), then to sniffing the content. ``file_name`` names the file in
    errors (defaults to the path's name). Returns all records, or raises ``ValidationFailed`` listing
    every bad one; never a partial list.
    """
    return [record for _, record in _load_rows(source, model, file_name, file_format)]


def _load_rows[R: _Record](
    source: bytes | str | Path, model: type[R], file_name: str | None, file_format: FileFormat | None
) -> list[tuple[int, R]]:
    """Validated ``(row, record)`` pairs of one file, or ``ValidationFailed`` naming every bad row."""
    if isinstance(source, bytes):
        data, name = source, file_name or "upload"
    else:
        path = Path(source)
        data, name = path.read_bytes(), file_name or path.name
    records, errors = _parse_rows(data, name, model, file_format, strict=False)
    if errors:
        raise _validation_failed(name, errors)
    return records


def _parse_rows[R: _Record](
    data: bytes, name: str, model: type[R], file_format: FileFormat | None, *, strict: bool
) -> tuple[list[tuple[int, R]], list[dict[str, Any]]]:
    """The good ``(row, record)`` pairs of one file and an error per bad row.

    ``strict`` (sync) also refuses the whole file, with a ``ValidationFailed`` naming the header, for
    an unknown column, a missing required column or no records at all: those are not row problems a
    merchant could accept.
    """
    text = _decode(data, name)
    fmt = file_format or detect_format(name, text)
    records: list[tuple[int, R]] = []
    errors: list[dict[str, Any]] = []
    seen_keys: set[str] = set()
    key_field = _KEY_FIELD.get(model, "")
    if fmt == "csv":
        rows = _csv_rows(text, name, model, errors, strict=strict)
    else:
        rows = _jsonl_rows(text, name, errors, model if strict else None)
    for row, raw in rows:
        try:
            record = model.model_validate(raw)
        except ValidationError as exc:
            errors.extend(_describe(exc, name, row, raw))
            continue
        key = str(getattr(record, key_field)) if key_field else ""
        if key and key in seen_keys:
            errors.append(_error(name, row, key_field, f"duplicate {key_field}; each must appear once"))
            continue
        seen_keys.add(key)
        records.append((row, record))
    if strict and not records and not errors:
        raise _file_problem(name, "file", "has no records", "Export the file again with its rows.")
    return records, errors


def load_shop_data(
    *,
    orders: bytes | str | Path,
    customers: bytes | str | Path | None = None,
    products: bytes | str | Path | None = None,
) -> ShopData:
    """Load the three files of a shop; customers and products may be omitted.

    Missing customers/products are derived from the order lines (ids only). Orders that name a user or
    product absent from a given customers/products file are reported as errors.
    """
    order_rows = _load_rows(orders, OrderRecord, _name(orders, "orders"), None)
    order_records = [record for _, record in order_rows]
    customer_records = (
        load_records(customers, CustomerRecord, file_name=_name(customers, "customers"))
        if customers is not None
        else [CustomerRecord(user_id=u) for u in sorted({o.user_id for o in order_records})]
    )
    product_records = (
        load_records(products, ProductRecord, file_name=_name(products, "products"))
        if products is not None
        else [ProductRecord(product_id=p) for p in sorted({o.product_id for o in order_records})]
    )
    _check_references(order_rows, customer_records, product_records, _name(orders, "orders"))
    return ShopData(customers=customer_records, products=product_records, orders=order_records)


def dump_records(
    records: list[OrderRecord] | list[CustomerRecord] | list[ProductRecord], fmt: FileFormat
) -> bytes:
    """Serialise records to CSV or JSON Lines bytes that :func:`load_records` reads back."""
    if fmt == "jsonl":
        return "".join(record.model_dump_json() + "\n" for record in records).encode()
    if not records:
        return b""
    # Plain tuples through the C writer: a sync stores millions of rows (times as ISO 8601 UTC,
    # the form model_dump(mode="json") gives; None as an empty cell).
    fields = list(type(records[0]).model_fields)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(fields)
    writer.writerows(tuple(_cell(getattr(record, field)) for field in fields) for record in records)
    return buffer.getvalue().encode()


def _cell(value: object) -> object:
    if value is None:
        return ""
    if isinstance(value, datetime):
        return value.isoformat().replace("+00:00", "Z")
    return value


def _name(source: bytes | str | Path, default: str) -> str:
    return default if isinstance(source, bytes) else Path(source).name


def _decode(data: bytes, name: str) -> str:
    try:
        return data.decode("utf-8-sig")  # tolerate the BOM spreadsheet programs write
    except UnicodeDecodeError as exc:
        raise ValidationFailed(
            f"{name} is not UTF-8 text (byte {exc.start})",
            field="file",
            remedy="Export the file as UTF-8 CSV or JSON Lines.",
            details={"file": name, "errors": [_error(name, 0, "file", "not UTF-8 text")]},
        ) from exc


def detect_format(name: str, text: str) -> FileFormat:
    """CSV or JSON Lines: by the file name's suffix, else by the first character of the text."""
    lowered = name.lower()
    if lowered.endswith((".jsonl", ".ndjson", ".json")):
        return "jsonl"
    if lowered.endswith(".csv"):
        return "csv"
    return "jsonl" if text.lstrip().startswith("{") else "csv"


def _csv_rows(
    text: str, name: str, model: type[_Record], errors: list[dict[str, Any]], *, strict: bool = False
) -> Iterator[tuple[int, dict[str, Any]]]:
    reader = csv.reader(io.StringIO(text))
    names = [h.strip() for h in next(reader, [])]
    header = set(names) - {""}
    missing = [
        field_name
        for field_name, info in model.model_fields.items()
        if info.is_required() and not _column_present(field_name, info.validation_alias, header)
    ]
    if strict:
        _check_header(name, model, header, missing)
    for column in missing:
        errors.append(_error(name, 1, column, "required column is missing from the header"))
    if missing:
        return
    for cells in reader:
        if not cells:
            continue  # a blank line
        # An empty cell means "not given" (CSV has no null), so it is left out of the record.
        # reader.line_num is the physical line of the record's end, right for one-line records.
        yield reader.line_num, {k: v for k, v in zip(names, cells, strict=False) if v and not v.isspace()}


def _column_present(field_name: str, alias: object, header: set[str]) -> bool:
    choices = alias.choices if isinstance(alias, AliasChoices) else []
    return field_name in header or any(choice in header for choice in choices)


def _jsonl_rows(
    text: str, name: str, errors: list[dict[str, Any]], strict_model: type[_Record] | None = None
) -> Iterator[tuple[int, dict[str, Any]]]:
    known = columns_of(strict_model) if strict_model is not None else None
    for row, line in enumerate(text.splitlines(), start=1):
        raw, problems = jsonl_record(line, row, name, known)
        errors.extend(problems)
        if raw is not None:
            yield row, raw


def jsonl_record(
    line: str, row: int, name: str, known: set[str] | None
) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """One line of a JSON Lines file: its fields (blank strings left out, as not given) or its
    problems; ``(None, [])`` for a blank line. ``known`` refuses a line with another column."""
    if not line.strip():
        return None, []
    try:
        raw = json.loads(line)
    except json.JSONDecodeError as exc:
        return None, [_error(name, row, "line", f"not valid JSON ({exc.msg})")]
    if not isinstance(raw, dict):
        return None, [_error(name, row, "line", "each line must be a JSON object")]
    raw = {k: v for k, v in raw.items() if not (isinstance(v, str) and not v.strip())}
    if known is not None and not known.issuperset(raw):
        return None, [
            _error(name, row, key, f"unknown column; the columns are {', '.join(sorted(known))}")
            for key in sorted(set(raw) - known)
        ]
    return raw, []


def columns_of(model: type[_Record]) -> set[str]:
    """Every column name a record type accepts (field names and their aliases)."""
    names: set[str] = set()
    for field_name, info in model.model_fields.items():
        alias = info.validation_alias
        names.add(field_name)
        names.update(str(c) for c in (alias.choices if isinstance(alias, AliasChoices) else []))
    return names


# The file kinds by their record models, and what to call one file of each kind.
_KINDS: dict[type[_Record], str] = {
    CustomerRecord: "customers",
    ProductRecord: "products",
    OrderRecord: "orders",
}
_ONE_FILE = {"customers": "a customers file", "products": "a products file", "orders": "an orders file"}


def kind_it_looks_like(header: set[str]) -> str | None:
    """The file kind (customers, products, orders) whose columns a header has, by the names the
    service reads: an orders file has every order column; a customers file has user_id and a
    customer column but no product_id; a products file has product_id and no user_id. None when
    the header looks like none of them."""
    if set(_required(OrderRecord)) <= header:
        return "orders"
    customer_only = columns_of(CustomerRecord) - {"user_id"}
    if "user_id" in header and "product_id" not in header and header & customer_only:
        return "customers"
    if "product_id" in header and "user_id" not in header:
        return "products"
    return None


def _required(model: type[_Record]) -> list[str]:
    return [field_name for field_name, info in model.model_fields.items() if info.is_required()]


def _check_header(name: str, model: type[_Record], header: set[str], missing: list[str]) -> None:
    """Refuse a CSV whose header lacks a required column or has one the file type does not define;
    a header that is another kind's is named for what it looks like (a file in the wrong slot)."""
    if not header:
        raise _file_problem(
            name, "file", "is empty (no header row)", "Export the file again with its header."
        )
    kind, looks_like = _KINDS[model], kind_it_looks_like(header)
    unknown = sorted(header - columns_of(model))
    if (missing or unknown) and looks_like is not None and looks_like != kind:
        raise _file_problem(
            name,
            "file",
            f"looks like {_ONE_FILE[looks_like]}, not {_ONE_FILE[kind]}: its first row has "
            f"{', '.join(c for c in sorted(header) if c in columns_of(_model_of(looks_like)))}",
            f"Choose this file as the {looks_like} file, and your {kind} file here.",
        )
    if missing:
        columns = "column" if len(missing) == 1 else "columns"
        raise _file_problem(
            name,
            missing[0],
            f"has no {', '.join(missing)} {columns} in its header row",
            f"Add the {', '.join(missing)} {columns} to the file's first row, or check that it is the "
            "right file for this slot.",
        )
    if unknown:
        raise _file_problem(
            name,
            unknown[0],
            f"has unknown column(s) {', '.join(unknown)} in its header row",
            f"Rename or remove them; the columns are {', '.join(sorted(columns_of(model)))}.",
        )


def _model_of(kind: str) -> type[_Record]:
    return next(model for model, name in _KINDS.items() if name == kind)


def _file_problem(name: str, field: str, reason: str, remedy: str) -> ValidationFailed:
    """A problem of the whole file (no row to accept or drop): nothing of the upload is loaded."""
    return ValidationFailed(
        f"{name} {reason}.",
        field=field,
        remedy=remedy,
        details={"file": name, "errors": [_error(name, 1 if field != "file" else 0, field, reason)]},
    )


def _describe(exc: ValidationError, name: str, row: int, raw: dict[str, Any]) -> list[dict[str, Any]]:
    described = []
    for err in exc.errors(include_input=False, include_url=False):
        field = ".".join(str(part) for part in err["loc"]) or "record"
        blank = err["type"] == "missing" or (field in raw and raw[field] is None)
        described.append(_error(name, row, field, "is required" if blank else err["msg"]))
    return described


def _error(name: str, row: int, field: str, reason: str) -> dict[str, Any]:
    return {"file": name, "row": row, "field": field, "reason": reason}


def _validation_failed(name: str, errors: list[dict[str, Any]]) -> ValidationFailed:
    shown = "; ".join(f"row {e['row']} {e['field']}: {e['reason']}" for e in errors[:_MESSAGE_ERRORS])
    more = f" (and {len(errors) - _MESSAGE_ERRORS} more)" if len(errors) > _MESSAGE_ERRORS else ""
    return ValidationFailed(
        f"{name} has {len(errors)} invalid record(s): {shown}{more}",
        field=errors[0]["field"],
        remedy="Fix the listed rows and upload the whole file again.",
        details={"file": name, "error_count": len(errors), "errors": errors},
    )


def _check_references(
    orders: list[tuple[int, OrderRecord]],
    customers: list[CustomerRecord],
    products: list[ProductRecord],
    name: str,
) -> None:
    users = {c.user_id for c in customers}
    items = {p.product_id for p in products}
    errors: list[dict[str, Any]] = []
    for row, order in orders:
        if order.user_id not in users:
            errors.append(_error(name, row, "user_id", "user is not in the customers file"))
        if order.product_id not in items:
            errors.append(_error(name, row, "product_id", "product is not in the products file"))
    if errors:
        raise _validation_failed(name, errors)
