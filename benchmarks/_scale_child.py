"""Child process of ``benchmarks.scale``: one path at one shop size, so the peak memory (``ru_maxrss``)
is that path's own. ``python -m benchmarks._scale_child PATH SHOP_DIR WORKDIR CUSTOMERS ORDERS PRODUCTS``
prints one JSON line: seconds, CPU seconds, calls, peak and starting resident memory, notes.

The peak is the process's resident high-water mark. Linux carries ``ru_maxrss`` across ``fork`` and
``exec``, so a child of a large parent would report the parent's size: the mark is reset first
(``/proc/self/clear_refs``) and read from ``VmHWM``, which is what ``ru_maxrss`` reports once reset."""

from __future__ import annotations

import json
import os
import resource
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from benchmarks._scale_paths import PATHS, ShopSize, cpu_seconds
from tools.large_shop import ShopFiles

if TYPE_CHECKING:
    from local.template import FunctionSpec


def main(argv: list[str]) -> None:
    name, shop_dir, workdir = argv[0], Path(argv[1]), Path(argv[2])
    size = ShopSize(customers=int(argv[3]), orders=int(argv[4]), products=int(argv[5]))
    path = next(p for p in PATHS if p.name == name)
    # The memory the template gives the path's function, as Lambda tells the function, and the
    # engine's fixed limit where its configuration sets one (else the engine takes half the memory:
    # shared/dataplane/engine.py).
    if path.function:
        function = _function(path.function)
        os.environ["AWS_LAMBDA_FUNCTION_MEMORY_SIZE"] = str(function.memory_size)
        engine_mb = function.environment.get("ENGINE_MEMORY_MB")
        if engine_mb:
            os.environ["ENGINE_MEMORY_MB"] = str(engine_mb)
    shop = ShopFiles(shop_dir / "customers.csv", shop_dir / "products.csv", shop_dir / "orders.csv")
    rss_before_mb = _reset_peak_mb()
    cpu = cpu_seconds()
    measured = path.measure(size, shop, workdir)
    print(
        json.dumps(
            {
                "seconds": measured.seconds,
                "cpu_seconds": cpu_seconds() - cpu,
                "calls": measured.calls,
                "peak_mb": _peak_mb(),
                "rss_before_mb": rss_before_mb,
                "load_average": os.getloadavg()[0],
                "notes": measured.notes,
                **measured.extra,
            }
        )
    )


def _function(name: str) -> FunctionSpec:
    """The template's function ``name`` as SAM makes it (Globals merged in): its memory, its
    environment."""
    from local.template import functions, load_template

    return functions(load_template())[name]


def _status_mb(field: str) -> float:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith(f"{field}:")) / 1024


def _reset_peak_mb() -> float:
    """Reset the high-water mark to what is resident now, and return that (MB)."""
    try:
        with open("/proc/self/clear_refs", "w") as clear_refs:
            clear_refs.write("5")
        return _status_mb("VmRSS")
    except OSError:  # not Linux: ru_maxrss as it is
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _peak_mb() -> float:
    try:
        return _status_mb("VmHWM")
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


if __name__ == "__main__":
    main(sys.argv[1:])
