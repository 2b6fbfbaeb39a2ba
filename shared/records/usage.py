"""Prediction usage as metered: one API key's count on one UTC day (stored by
``shared.repositories.usage``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime


@dataclass(frozen=True)
class KeyUsageDay:
    """One API key's predictions on one UTC day, in total and per model."""

    org_id: str
    key_id: str
    prefix: str
    label: str
    day: date
    predictions: int
    by_model: dict[str, int] = field(default_factory=dict)
    last_used_at: datetime | None = None


@dataclass(frozen=True)
class DayCount:
    """What counting one prediction on the key's day item decided."""

    counted: int | None  # the key's predictions that day, this one included; None when refused
    revoked: bool = False  # refused: the key was revoked
    over_quota: bool = False  # refused: the day's quota is spent
    unseeded: bool = False  # refused: the day's item has not been seeded from the key record yet


@dataclass(frozen=True)
class DayStanding:
    """What the key's day item says of the key now, read without counting."""

    seeded: bool  # the day's item was seeded from the key record (its first prediction was counted)
    revoked: bool  # the key was revoked (marked on the day's item)
    predictions: int  # the key's predictions counted that day
    daily_quota: int | None  # the quota the day was seeded with (None: unlimited, or not seeded)
