"""What ``benchmarks.scale``'s paths are made of: a shop's size, a path, and what a path measured.

Apart from ``benchmarks._scale_paths`` (which lists the paths and re-exports these) so that a module
of paths it imports, ``benchmarks._scale_training``, can be imported first without a circular import.
"""

from __future__ import annotations

import resource
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tools.large_shop import ShopFiles


@dataclass(frozen=True)
class ShopSize:
    customers: int
    orders: int
    products: int

    @property
    def label(self) -> str:
        return f"{_short(self.customers)}c/{_short(self.orders)}o/{_short(self.products)}p"


@dataclass
class Measured:
    """What a path measured: its own seconds (setup excluded), the calls it made to the stores (S3
    gets and puts, or what the path counts), and a note."""

    seconds: float
    calls: int
    notes: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ScalePath:
    name: str
    function: str
    max_orders: int
    measure: Callable[[ShopSize, ShopFiles, Path], Measured]


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _short(n: int) -> str:
    for unit, scale in (("M", 1_000_000), ("k", 1_000)):
        if n >= scale and n % (scale // 10) == 0:
            return f"{n / scale:g}{unit}"
    return str(n)
