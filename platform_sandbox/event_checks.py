"""Checking one Conversions API request's events (docs/platform-notes.md §11.2-§11.6).

Pure functions over plain values. Every event is checked before any is kept: the first problem fails
the whole request with the platform's error, naming the parameter the way the platform does
(``$['data'][3]['user_data']['em']``), as the platform rejects a batch with any invalid event.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import math
import re
from collections.abc import Mapping
from typing import Any

from platform_sandbox import errors
from platform_sandbox.config import SandboxConfig

DAY_SECONDS = 86_400
# The standard events (docs/platform-notes.md §11.2); any other name is a custom event.
STANDARD_EVENTS = frozenset(
    {
        "AddPaymentInfo",
        "AddToCart",
        "AddToWishlist",
        "CompleteRegistration",
        "Contact",
        "CustomizeProduct",
        "Donate",
        "FindLocation",
        "InitiateCheckout",
        "Lead",
        "PageView",
        "Purchase",
        "Schedule",
        "Search",
        "StartTrial",
        "SubmitApplication",
        "Subscribe",
        "ViewContent",
    }
)
# Custom event names: at most 50 characters (docs/platform-notes.md §11.2).
CUSTOM_EVENT_NAME = re.compile(r"[A-Za-z0-9_\- ]{1,50}")
ACTION_SOURCES = frozenset(
    {
        "email",
        "website",
        "app",
        "phone_call",
        "chat",
        "physical_store",
        "system_generated",
        "business_messaging",
        "other",
    }
)
EVENT_KEYS = frozenset(
    {
        "event_name",
        "event_time",
        "user_data",
        "custom_data",
        "event_source_url",
        "opt_out",
        "event_id",
        "action_source",
        "data_processing_options",
        "data_processing_options_country",
        "data_processing_options_state",
        "referrer_url",
        "app_data",
        "original_event_data",
        "attribution_data",
        "messaging_channel",
        "advanced_measurement_table",
    }
)
# user_data keys sent as SHA-256 (a digest or a list of digests) and keys sent as they are
# (docs/platform-notes.md §11.4). external_id may be either: hashing it is recommended, not required.
HASHED_USER_KEYS = frozenset(
    {"em", "ph", "fn", "ln", "ge", "db", "ct", "st", "zp", "country", "f5first", "f5last", "fi"}
    | {"dobd", "dobm", "doby"}
)
PLAIN_USER_KEYS = frozenset(
    {
        "client_ip_address",
        "client_user_agent",
        "fbc",
        "fbp",
        "subscription_id",
        "fb_login_id",
        "lead_id",
        "anon_id",
        "madid",
        "page_id",
        "page_scoped_user_id",
        "ctwa_clid",
        "ig_account_id",
        "ig_sid",
    }
)
EITHER_USER_KEYS = frozenset({"external_id"})
# Never hashed, and never anything but text: a digest here means the sender hashed what it must not.
MUST_NOT_HASH = frozenset({"client_ip_address", "client_user_agent", "fbc", "fbp"})
SHA256_HEX = re.compile(r"[0-9a-f]{64}")
ANY_HEX_DIGEST = re.compile(r"[0-9A-Fa-f]{64}")
CURRENCY = re.compile(r"[A-Za-z]{3}")
CONTENT_TYPES = frozenset({"product", "product_group"})
# custom_data keys with a type; any other key is a custom property and passes as it is.
NUMBER_KEYS = ("value", "predicted_ltv", "net_revenue")
TEXT_KEYS = ("content_name", "content_category", "order_id", "search_string", "status", "item_number")
LDU = "LDU"


def decode_events(raw: Any, limit: int) -> list[Any]:
    """The ``data`` parameter as a list of events: a JSON array (or its text, from a form field) whose
    items are objects or, as the SDK sends them, JSON strings of objects. Raises 100 when ``data`` is
    missing or not an array, and when it holds more than ``limit`` events."""
    if raw is None or raw == "":
        raise errors.invalid_parameter("The parameter data is required", blame="data")
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError as exc:
            raise errors.invalid_parameter("Param data must be an array", blame="data") from exc
    if not isinstance(raw, list) or not raw:
        raise errors.invalid_parameter("Param data must be a non-empty array", blame="data")
    if len(raw) > limit:
        raise errors.too_many_events(len(raw), limit)
    events: list[Any] = []
    for item in raw:
        if isinstance(item, str):
            # Text that is not JSON stays text, reported as "must be an object" with its index.
            with contextlib.suppress(ValueError):
                item = json.loads(item)
        events.append(item)
    return events


def check_events(events: list[Any], now: float, config: SandboxConfig) -> list[dict[str, Any]]:
    """Check every event; return them unchanged when all pass, else raise the first problem."""
    for index, event in enumerate(events):
        check_event(index, event, now, config)
    return events


def check_event(index: int, event: Any, now: float, config: SandboxConfig) -> None:
    """Raise the platform's error for the first problem of ``event`` (the ``index``-th of ``data``)."""
    at = f"$['data'][{index}]"
    if not isinstance(event, dict):
        raise errors.event_parameter(at, "must be an object")
    unknown = sorted(set(event) - EVENT_KEYS)
    if unknown:
        raise errors.event_parameter(f"{at}['{unknown[0]}']", "is not a server event parameter")
    _check_name(at, event.get("event_name"))
    action_source = event.get("action_source")
    _check_time(index, at, event.get("event_time"), action_source, now, config)
    if action_source in (None, ""):
        raise errors.event_parameter(f"{at}['action_source']", "is required")
    if action_source not in ACTION_SOURCES:
        raise errors.event_parameter(f"{at}['action_source']", f"must be one of {sorted(ACTION_SOURCES)}")
    user_data = event.get("user_data")
    if not isinstance(user_data, dict):
        raise errors.event_parameter(f"{at}['user_data']", "is required")
    if action_source == "website":
        if not _is_web_url(event.get("event_source_url")):
            raise errors.event_parameter(
                f"{at}['event_source_url']", "is required for website events (an http or https URL)"
            )
        if not user_data.get("client_user_agent"):
            raise errors.event_parameter(
                f"{at}['user_data']['client_user_agent']", "is required for website events"
            )
    _check_user_data(index, f"{at}['user_data']", user_data)
    if "custom_data" in event:
        _check_custom_data(f"{at}['custom_data']", event["custom_data"])
    if event.get("event_name") == "Purchase":
        given = event.get("custom_data")
        custom: dict[str, Any] = given if isinstance(given, dict) else {}
        for key in ("value", "currency"):
            if key not in custom:
                raise errors.event_parameter(f"{at}['custom_data']['{key}']", "is required for Purchase")
    _check_scalar_fields(at, event)
    _check_data_processing(at, event)


def _check_name(at: str, name: Any) -> None:
    if name in (None, ""):
        raise errors.event_parameter(f"{at}['event_name']", "is required")
    if not isinstance(name, str) or (name not in STANDARD_EVENTS and not CUSTOM_EVENT_NAME.fullmatch(name)):
        raise errors.event_parameter(
            f"{at}['event_name']", "must be a standard event or a custom name of at most 50 characters"
        )


def _check_time(
    index: int, at: str, value: Any, action_source: Any, now: float, config: SandboxConfig
) -> None:
    path = f"{at}['event_time']"
    if value in (None, ""):
        raise errors.event_parameter(path, "is required")
    if isinstance(value, str) and value.isdigit():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool):
        raise errors.event_parameter(path, "must be a Unix timestamp in seconds")
    days = (
        config.physical_store_max_age_days if action_source == "physical_store" else config.event_max_age_days
    )
    if value < now - days * DAY_SECONDS:
        raise errors.event_too_old(index, days)
    if value > now + config.event_future_skew_seconds:
        # A millisecond timestamp lands here too: the most common bug (docs/platform-notes.md §11.3).
        raise errors.event_parameter(path, "is in the future (a Unix timestamp in seconds is expected)")


def _check_user_data(index: int, at: str, user_data: Mapping[str, Any]) -> None:
    identifying = False
    for key, value in user_data.items():
        path = f"{at}['{key}']"
        if value is None or value == "" or value == []:
            continue
        if key in HASHED_USER_KEYS:
            for item in value if isinstance(value, list) else [value]:
                if not isinstance(item, str) or not SHA256_HEX.fullmatch(item):
                    raise errors.event_parameter(
                        path, "must be hashed: a lower-case hex SHA-256 digest of the normalised value"
                    )
        elif key in EITHER_USER_KEYS:
            items = value if isinstance(value, list) else [value]
            if not all(isinstance(item, str) and item for item in items):
                raise errors.event_parameter(path, "must be a string or an array of strings")
        elif key in PLAIN_USER_KEYS:
            _check_plain(path, key, value)
        else:
            raise errors.event_parameter(path, "is not a customer information parameter")
        # An IP address or a user agent alone does not identify anyone; everything else can match.
        identifying = identifying or key not in ("client_ip_address", "client_user_agent")
    if not identifying and not (user_data.get("client_ip_address") and user_data.get("client_user_agent")):
        raise errors.insufficient_customer_information(index)


def _check_plain(path: str, key: str, value: Any) -> None:
    if key in ("fb_login_id", "lead_id") and isinstance(value, int) and not isinstance(value, bool):
        return
    if not isinstance(value, str):
        raise errors.event_parameter(path, "must be a string")
    if key in MUST_NOT_HASH and ANY_HEX_DIGEST.fullmatch(value):
        raise errors.event_parameter(path, "must not be hashed: send the value as it is")
    if key == "client_ip_address":
        try:
            ipaddress.ip_address(value)
        except ValueError as exc:
            raise errors.event_parameter(path, "must be an IPv4 or IPv6 address") from exc


def _check_custom_data(at: str, custom: Any) -> None:
    if not isinstance(custom, dict):
        raise errors.event_parameter(at, "must be an object")
    for key in NUMBER_KEYS:
        if key in custom and not _is_number(custom[key]):
            raise errors.event_parameter(f"{at}['{key}']", "must be a number")
    if "currency" in custom and not (
        isinstance(custom["currency"], str) and CURRENCY.fullmatch(custom["currency"])
    ):
        raise errors.event_parameter(f"{at}['currency']", "must be a three-letter ISO 4217 code")
    for key in TEXT_KEYS:
        if key in custom and not isinstance(custom[key], str):
            raise errors.event_parameter(f"{at}['{key}']", "must be a string")
    if "num_items" in custom and not _is_integer(custom["num_items"]):
        raise errors.event_parameter(f"{at}['num_items']", "must be an integer")
    if "content_type" in custom and custom["content_type"] not in CONTENT_TYPES:
        raise errors.event_parameter(f"{at}['content_type']", "must be product or product_group")
    if "content_ids" in custom:
        ids = custom["content_ids"]
        if not isinstance(ids, list) or not all(isinstance(item, str) and item for item in ids):
            raise errors.event_parameter(f"{at}['content_ids']", "must be an array of strings")
    if "contents" in custom:
        _check_contents(f"{at}['contents']", custom["contents"])


def _check_contents(at: str, contents: Any) -> None:
    if not isinstance(contents, list):
        raise errors.event_parameter(at, "must be an array of objects")
    for position, item in enumerate(contents):
        path = f"{at}[{position}]"
        if not isinstance(item, dict) or not isinstance(item.get("id"), str) or not item["id"]:
            raise errors.event_parameter(path, "must be an object with an id")
        if "quantity" in item and not _is_integer(item["quantity"]):
            raise errors.event_parameter(f"{path}['quantity']", "must be an integer")
        if "item_price" in item and not _is_number(item["item_price"]):
            raise errors.event_parameter(f"{path}['item_price']", "must be a number")


def _check_scalar_fields(at: str, event: Mapping[str, Any]) -> None:
    if "opt_out" in event and not isinstance(event["opt_out"], bool):
        raise errors.event_parameter(f"{at}['opt_out']", "must be a boolean")
    event_id = event.get("event_id")
    if event_id is not None and not (isinstance(event_id, str) and event_id) and not _is_integer(event_id):
        raise errors.event_parameter(f"{at}['event_id']", "must be a string")
    for key in ("event_source_url", "referrer_url"):
        if key in event and event[key] is not None and not _is_web_url(event[key]):
            raise errors.event_parameter(f"{at}['{key}']", "must be an http or https URL")


def _check_data_processing(at: str, event: Mapping[str, Any]) -> None:
    """``data_processing_options`` (docs/platform-notes.md §11.5): ``[]`` or ``["LDU"]``; with LDU a
    country of 0 or 1 and a state of 0 or 1000."""
    options = event.get("data_processing_options")
    if options is None:
        return
    if not isinstance(options, list) or any(option != LDU for option in options):
        raise errors.event_parameter(f"{at}['data_processing_options']", 'must be [] or ["LDU"]')
    if LDU not in options:
        return
    if event.get("data_processing_options_country", 0) not in (0, 1):
        raise errors.event_parameter(f"{at}['data_processing_options_country']", "must be 0 or 1")
    if event.get("data_processing_options_state", 0) not in (0, 1000):
        raise errors.event_parameter(f"{at}['data_processing_options_state']", "must be 0 or 1000")


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _is_integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_web_url(value: Any) -> bool:
    return isinstance(value, str) and re.match(r"https?://[^\s/]+", value) is not None
