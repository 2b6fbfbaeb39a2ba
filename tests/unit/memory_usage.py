"""An in-memory usage store for unit tests, keeping the contract of ``DynamoUsageStore``."""

from __future__ import annotations

from dataclasses import replace
from datetime import date, datetime

from shared.records.principals import ApiKeyPrincipal
from shared.records.usage import KeyUsageDay


class MemoryUsage:
    """The usage store's contract in memory: one counter per key and day, per-model counts on it."""

    def __init__(self) -> None:
        self.days: dict[tuple[str, str, date], KeyUsageDay] = {}

    def add_prediction(
        self, principal: ApiKeyPrincipal, model_name: str, day: date, now: datetime, *, limit: int | None
    ) -> int | None:
        slot = (principal.org_id, principal.key_id, day)
        current = self.days.get(slot) or KeyUsageDay(
            principal.org_id, principal.key_id, principal.prefix, principal.label, day, 0
        )
        if limit is not None and current.predictions >= limit:
            return None
        by_model = {**current.by_model, model_name: current.by_model.get(model_name, 0) + 1}
        self.days[slot] = replace(
            current, predictions=current.predictions + 1, by_model=by_model, last_used_at=now
        )
        return current.predictions + 1

    def days_for_key(
        self, org_id: str, key_id: str, period: tuple[date, date] | None = None
    ) -> list[KeyUsageDay]:
        found = [d for (o, k, _), d in self.days.items() if (o, k) == (org_id, key_id)]
        if period:
            found = [d for d in found if period[0] <= d.day <= period[1]]
        return sorted(found, key=lambda d: d.day)
