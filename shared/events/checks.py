"""What the Conversions API refuses, checked on each event before its batch leaves
(docs/platform-notes.md §11.2-§11.6).

The platform refuses a whole request when one of its events is invalid, so an event it would refuse
is taken out first: one too old is *skipped* (it happened outside the platform's window; nothing to
correct), one malformed is *rejected* with the reason. The service's view of the rules, kept apart
from the sandbox's on purpose: each side follows the notes, and the tests drive one against the other.
"""

from __future__ import annotations

import ipaddress
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

DAY_SECONDS = 86_400
MAX_AGE_DAYS = 7
PHYSICAL_STORE_MAX_AGE_DAYS = 62
# An event this close to the window's edge may cross it while its batch waits out a throttle or a
# retry; it is treated as too old rather than risk the whole batch's refusal.
AGE_MARGIN_SECONDS = 15 * 60
# How far ahead of the clock an event may be: the platform does not say (§11.3); this is RudderStack's.
FUTURE_SKEW_SECONDS = 60
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
EVENT_NAME = re.compile(r"[A-Za-z0-9_\- ]{1,50}")
HASHED_KEYS = frozenset({"em", "ph", "fn", "ln", "ge", "db", "ct", "st", "zp", "country"})
PLAIN_KEYS = frozenset({"client_ip_address", "client_user_agent", "fbc", "fbp"})
# Keys that identify a person by themselves; an IP address and a user agent only do together.
IDENTIFYING_KEYS = HASHED_KEYS | {"external_id", "fbc", "fbp"}
SHA256_HEX = re.compile(r"[0-9a-f]{64}")
HEX_DIGEST = re.compile(r"[0-9A-Fa-f]{64}")
CURRENCY = re.compile(r"[A-Z]{3}")
WEB_URL = re.compile(r"https?://[^\s/]+")


class Verdict(StrEnum):
    """Why an event does not leave: outside the platform's window, or something the platform refuses."""

    TOO_OLD = "too_old"
    MALFORMED = "malformed"


@dataclass(frozen=True, slots=True)
class Problem:
    """Why one event is kept back: the verdict and, for a malformed one, the field and what is wrong
    (never the value: it may be a customer's)."""

    verdict: Verdict
    field: str
    reason: str


def check_event(event: Mapping[str, Any], now: float) -> Problem | None:
    """The problem that would make the platform refuse ``event`` at Unix time ``now``, or None."""
    name = event.get("event_name")
    if not isinstance(name, str) or not EVENT_NAME.fullmatch(name):
        return _malformed("event_name", "is missing or not an event name of at most 50 characters")
    if not isinstance(event.get("event_id"), str) or not event["event_id"]:
        return _malformed("event_id", "is missing: without it a resend would count twice")
    action_source = event.get("action_source")
    if action_source not in ACTION_SOURCES:
        return _malformed("action_source", "is missing or not one the platform knows")
    problem = _check_time(event.get("event_time"), action_source, now)
    if problem is not None:
        return problem
    user_data = event.get("user_data")
    if not isinstance(user_data, Mapping):
        return _malformed("user_data", "is missing")
    if action_source == "website":
        url = event.get("event_source_url")
        if not isinstance(url, str) or not WEB_URL.match(url):
            return _malformed("event_source_url", "is required for website events")
        if not user_data.get("client_user_agent"):
            return _malformed("user_data.client_user_agent", "is required for website events")
    problem = _check_user_data(user_data)
    if problem is not None:
        return problem
    return _check_custom_data(name, event.get("custom_data"))


def _check_time(value: Any, action_source: str, now: float) -> Problem | None:
    if not isinstance(value, int) or isinstance(value, bool):
        return _malformed("event_time", "is not a Unix time in seconds")
    days = PHYSICAL_STORE_MAX_AGE_DAYS if action_source == "physical_store" else MAX_AGE_DAYS
    if value < now - days * DAY_SECONDS + AGE_MARGIN_SECONDS:
        return Problem(Verdict.TOO_OLD, "event_time", f"is more than {days} days ago")
    if value > now + FUTURE_SKEW_SECONDS:
        return _malformed("event_time", "is in the future (milliseconds instead of seconds?)")
    return None


def _check_user_data(user_data: Mapping[str, Any]) -> Problem | None:
    identifying = False
    for key, value in user_data.items():
        if value in (None, "", []):
            continue
        if key in HASHED_KEYS:
            items = value if isinstance(value, list) else [value]
            if not all(isinstance(item, str) and SHA256_HEX.fullmatch(item) for item in items):
                return _malformed(f"user_data.{key}", "must be a lower-case SHA-256 digest")
        elif key in PLAIN_KEYS:
            if not isinstance(value, str) or HEX_DIGEST.fullmatch(value):
                return _malformed(f"user_data.{key}", "must be sent as it is, never hashed")
            if key == "client_ip_address" and not _is_ip_address(value):
                return _malformed("user_data.client_ip_address", "is not an IP address")
        elif key == "external_id":
            items = value if isinstance(value, list) else [value]
            if not all(isinstance(item, str) and item for item in items):
                return _malformed("user_data.external_id", "must be text")
        else:
            return _malformed(f"user_data.{key}", "is not a customer information key this service sends")
        identifying = identifying or key in IDENTIFYING_KEYS
    if not identifying and not (user_data.get("client_ip_address") and user_data.get("client_user_agent")):
        return _malformed("user_data", "has no customer information the platform can match")
    return None


def _check_custom_data(name: str, custom: Any) -> Problem | None:
    if custom is None:
        custom = {}
    if not isinstance(custom, Mapping):
        return _malformed("custom_data", "is not an object")
    for key in ("value", "predicted_ltv"):
        if key in custom and not _is_number(custom[key]):
            return _malformed(f"custom_data.{key}", "is not a finite number")
    if "currency" in custom and not (
        isinstance(custom["currency"], str) and CURRENCY.fullmatch(custom["currency"])
    ):
        return _malformed("custom_data.currency", "is not a three-letter ISO 4217 code")
    if name == "Purchase" and ("value" not in custom or "currency" not in custom):
        return _malformed("custom_data", "a purchase needs its value and currency")
    ids = custom.get("content_ids")
    if ids is not None and not (
        isinstance(ids, list) and all(isinstance(item, str) and item for item in ids)
    ):
        return _malformed("custom_data.content_ids", "is not a list of product ids")
    contents = custom.get("contents")
    if contents is not None:
        if not isinstance(contents, list):
            return _malformed("custom_data.contents", "is not a list")
        for item in contents:
            if not isinstance(item, Mapping) or not isinstance(item.get("id"), str) or not item["id"]:
                return _malformed("custom_data.contents", "has an item without a product id")
            if not _is_integer(item.get("quantity", 1)) or not _is_number(item.get("item_price", 0)):
                return _malformed("custom_data.contents", "has a quantity or price that is not a number")
    if "num_items" in custom and not _is_integer(custom["num_items"]):
        return _malformed("custom_data.num_items", "is not a whole number")
    return None


def _malformed(field: str, reason: str) -> Problem:
    return Problem(Verdict.MALFORMED, field, reason)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _is_integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_ip_address(value: str) -> bool:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True
