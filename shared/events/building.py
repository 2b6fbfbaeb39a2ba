"""Building server events once, as the JSON the Conversions API takes (docs/platform-notes.md §11.2-§11.5).

An event's ``event_id`` comes from what it records (the order id for a purchase), never from the
moment it is built, so a resent batch or a retried sync repeats the same id and the platform keeps one
(§11.8). Customer information goes through the audiences' normaliser and hasher
(``shared.audiences.preparation.prepare_columns``): the same rules, the same pre-hashed pass-through and
the same Limited Data Use options as a customer-list upload, and the same ``external_id`` as the
uploads' ``EXTERN_ID``, so the platform can match one to the other.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from shared.audiences.identifiers import (
    DATA_PROCESSING_SCHEMA,
    DataProcessingOptions,
    DropReason,
    data_processing_options,
    extern_id_of,
    normalise_date_of_birth,
    sha256_hex,
)
from shared.audiences.preparation import IdentifierColumns, prepare_columns

# A server event as sent: a JSON-ready dict (the platform's names and types).
ServerEvent = dict[str, Any]
# The upload columns -> the Conversions API's customer information keys (§11.4). Every hashed key is
# sent as a list, as the platform's own examples and SDK send it.
USER_DATA_KEYS: Mapping[str, str] = {
    "EMAIL": "em",
    "PHONE": "ph",
    "FN": "fn",
    "LN": "ln",
    "COUNTRY": "country",
    "CT": "ct",
    "ST": "st",
    "ZIP": "zp",
    "GEN": "ge",
    "MADID": "madid",
}
# Sent as one value, not a list (§11.4: never hashed).
_SCALAR_KEYS = frozenset({"madid"})


class EventName(StrEnum):
    """The standard events this service sends (§11.2)."""

    PURCHASE = "Purchase"
    VIEW_CONTENT = "ViewContent"
    ADD_TO_CART = "AddToCart"
    INITIATE_CHECKOUT = "InitiateCheckout"


class ActionSource(StrEnum):
    """Where the conversion happened (§11.2); website events need a page URL and the browser's agent."""

    WEBSITE = "website"
    PHYSICAL_STORE = "physical_store"
    SYSTEM_GENERATED = "system_generated"
    OTHER = "other"


@dataclass(frozen=True, slots=True)
class Content:
    """One product line of an event: product id, units and unit price (``contents`` in §11.5)."""

    product_id: str
    quantity: int
    item_price: float | None = None

    def as_json(self) -> dict[str, Any]:
        item: dict[str, Any] = {"id": self.product_id, "quantity": self.quantity}
        if self.item_price is not None and math.isfinite(self.item_price):
            item["item_price"] = round(self.item_price, 2)
        return item


@dataclass(frozen=True, slots=True)
class Customer:
    """What an event says about its customer: ``user_data`` (hashed keys as lists, ``external_id``
    as the uploads' ``EXTERN_ID``) and, when the customer's Limited Data Use flag is known, the data
    processing options an upload would carry for them (§11.5)."""

    user_data: Mapping[str, Any]
    data_processing: DataProcessingOptions | None = None


def customers(columns: IdentifierColumns, *, default_country: str | None = None) -> dict[str, Customer]:
    """Each customer of ``columns`` by user id, ready for :func:`server_event`.

    ``columns`` holds the customers of one bounded batch (distinct user ids). Identifiers are
    normalised and hashed by ``prepare_columns`` (the other match keys too: city, state, postcode,
    gender, advertising id; the date of birth as the events' one ``db`` key, the SHA-256 of
    ``YYYYMMDD``); a customer without a usable e-mail or phone (whom an upload would drop) still gets an
    event with ``external_id`` alone. Raises what ``prepare_columns`` raises (an unknown
    ``default_country``).
    """
    prepared = prepare_columns(columns, default_country=default_country)
    schema = prepared.schema
    by_extern = {
        extern_id_of(user_id, None if columns.external_ids is None else columns.external_ids[at]): user_id
        for at, user_id in enumerate(columns.user_ids)
    }
    births = _birth_dates(columns)
    result: dict[str, Customer] = {}
    for row in prepared.rows:
        user_data: dict[str, Any] = {"external_id": [row[0]]}
        for key, value in zip(schema[1:], row[1:], strict=True):
            name = USER_DATA_KEYS.get(key)
            if name is not None and value:
                user_data[name] = value if name in _SCALAR_KEYS else [value]
        user_id = by_extern[row[0]]
        if (born := births.get(user_id)) is not None:
            user_data["db"] = [born]
        options: DataProcessingOptions | None = None
        if columns.carries_limited_data_use:
            at = schema.index(DATA_PROCESSING_SCHEMA[0])
            flags_cell, country_cell, state_cell = row[at : at + len(DATA_PROCESSING_SCHEMA)]
            options = (flags_cell, country_cell, state_cell)
        result[user_id] = Customer(user_data, options)
    flags, states = columns.limited_data_use, columns.states
    for position, user_id in enumerate(columns.user_ids):
        if user_id in result or not user_id:
            continue
        dpo = (
            data_processing_options(
                flags[position], columns.countries[position], states[position] if states else None
            )
            if flags is not None
            else None
        )
        given = None if columns.external_ids is None else columns.external_ids[position]
        result[user_id] = Customer({"external_id": [extern_id_of(user_id, given)]}, dpo)
    return result


def _birth_dates(columns: IdentifierColumns) -> dict[str, str]:
    """Each customer's date of birth as the events' ``db`` key: the SHA-256 of ``YYYYMMDD``, by the
    uploads' rule for the date (``identifiers.normalise_date_of_birth``), for those who have one."""
    if columns.dates_of_birth is None:
        return {}
    hashed: dict[str, str] = {}
    for user_id, raw in zip(columns.user_ids, columns.dates_of_birth, strict=True):
        born = normalise_date_of_birth(raw)
        if not isinstance(born, DropReason):
            hashed[user_id] = sha256_hex("".join(born))
    return hashed


def server_event(
    *,
    event_name: str,
    event_id: str,
    event_time: int,
    action_source: ActionSource,
    customer: Customer,
    custom_data: Mapping[str, Any] | None = None,
    event_source_url: str | None = None,
) -> ServerEvent:
    """One event as the platform takes it. The customer's Limited Data Use options, when known, become
    the event's ``data_processing_options``, ``_country`` and ``_state`` (§11.5); ``[]`` says "not
    limited"."""
    event: ServerEvent = {
        "event_name": str(event_name),
        "event_time": int(event_time),
        "event_id": event_id,
        "action_source": action_source.value,
        "user_data": dict(customer.user_data),
    }
    if event_source_url:
        event["event_source_url"] = event_source_url
    if custom_data:
        event["custom_data"] = dict(custom_data)
    if customer.data_processing is not None:
        flags, country, state = customer.data_processing
        event["data_processing_options"] = list(flags)
        if flags:
            event["data_processing_options_country"] = int(country)
            event["data_processing_options_state"] = int(state)
    return event


def purchase_event(
    *,
    order_id: str,
    event_time: int,
    action_source: ActionSource,
    customer: Customer,
    value: float,
    currency: str,
    contents: Sequence[Content] = (),
    predicted_ltv: float | None = None,
    event_source_url: str | None = None,
) -> ServerEvent:
    """A ``Purchase`` whose ``event_id`` is the order id (so the site's pixel, sending the same id, and
    every resend are de-duplicated by the platform), with the order's value, currency (ISO 4217, upper
    case), products and, when a purchase model gives one, the customer's predicted value."""
    custom: dict[str, Any] = {
        "value": round(float(value), 2),
        "currency": currency.upper(),
        "order_id": order_id,
    }
    if contents:
        custom["content_type"] = "product"
        custom["content_ids"] = list(dict.fromkeys(item.product_id for item in contents))
        custom["contents"] = [item.as_json() for item in contents]
        custom["num_items"] = sum(item.quantity for item in contents)
    if predicted_ltv is not None and math.isfinite(predicted_ltv):
        custom["predicted_ltv"] = round(float(predicted_ltv), 2)
    return server_event(
        event_name=EventName.PURCHASE,
        event_id=purchase_event_id(order_id),
        event_time=event_time,
        action_source=action_source,
        customer=customer,
        custom_data=custom,
        event_source_url=event_source_url,
    )


def purchase_event_id(order_id: str) -> str:
    """The ``event_id`` of an order's purchase: the order id itself, as the platform advises (§11.8) and
    the site's pixel can send it too."""
    return str(order_id)
