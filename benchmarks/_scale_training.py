"""The training paths of ``benchmarks.scale`` (issue 20): purchase and recommendation training from a
dataset version's training arrays, the export of a model's serving shards, and the code before the
rewrite at the sizes it survives, each in the training function (``TrainModelFunction``).

The arrays are the dataset version's ``training.npz`` when the sync wrote one, else a shop of the same
size generated as columns (``benchmarks._training_shop``) by the ``training_arrays`` setup path (its
peak is held to no function). ``train_*`` read them, train with the production code and keep the
purchase bundle for ``export``, which times ``shard_bundle`` alone: its growth exponent against the
users is the export's linearity. ``*_before`` run the training code of commit 523cd3a (before the
rewrite; the checkout is made with ``git archive``) in a grandchild fed one record per order line,
as that code loaded files; its peak is the grandchild's (``RUSAGE_CHILDREN``).
"""

from __future__ import annotations

import io
import itertools
import json
import resource
import subprocess
import sys
import tarfile
import time
from pathlib import Path

from benchmarks._scale_types import Measured, ShopSize
from tools.large_shop import ShopFiles

ROOT = Path(__file__).resolve().parents[1]
BEFORE_COMMIT = "523cd3a"


def _arrays_path(workdir: Path) -> Path:
    """Where the training arrays are: the dataset version's ``training`` object, else the generated ones."""
    datasets = workdir / "datasets"
    pointer = datasets / "current"
    if pointer.exists():
        version = json.loads((datasets / f"version-{pointer.read_text()}.json").read_text())
        key = version.get("keys", {}).get("training")
        if key:
            return workdir / "blobs" / key
    return workdir / "training.npz"


def measure_training_arrays(size: ShopSize, shop: ShopFiles, workdir: Path) -> Measured:
    """Setup: generate the training arrays when the sync left none."""
    from benchmarks._training_shop import large_shop
    from shared.ml.shop_arrays import write_training_arrays

    path = _arrays_path(workdir)
    if path.exists():
        return Measured(seconds=0.0, calls=0, notes="the sync's training.npz")
    started = time.perf_counter()
    path.write_bytes(write_training_arrays(large_shop(size.customers, size.orders, size.products)))
    return Measured(
        seconds=time.perf_counter() - started, calls=0, notes="generated (the sync wrote no training.npz)"
    )


def _train(model_type: str, workdir: Path) -> Measured:
    from shared.ml.shop_arrays import read_training_arrays
    from shared.ml.training import train_model

    started = time.perf_counter()
    stages: list[tuple[str, float]] = [("read", _high_water_mb())]
    shop = read_training_arrays(_arrays_path(workdir).read_bytes())
    model = train_model(
        shop,
        name=f"scale-{model_type}",
        model_type=model_type,  # type: ignore[arg-type]
        progress=lambda stage: stages.append((stage, _high_water_mb())),
    )
    seconds = time.perf_counter() - started
    stages.append(("end", _high_water_mb()))
    # The high-water mark as each stage starts: the stage before the largest step holds the peak.
    by_stage = ", ".join(
        f"{name} {mark - before:+.0f}" for (name, before), (_, mark) in itertools.pairwise(stages)
    )
    metric = "roc_auc" if model_type == "purchase" else "ndcg_at_10"
    baseline = "recency_baseline_roc_auc" if model_type == "purchase" else "popularity_ndcg_at_10"
    if model_type == "purchase":
        (workdir / "purchase-bundle.npz").write_bytes(model.artifacts["bundle"].data)
    shards = sum(1 for role in model.artifacts if role.startswith("shard-"))
    return Measured(
        seconds=seconds,
        calls=1,
        notes=f"{metric} {model.metrics[metric]:.3f} (baseline {model.metrics[baseline]:.3f}); "
        f"{shards} shards; read, train, evaluate, export; peak MB added by stage: {by_stage}",
    )


def _high_water_mb() -> float:
    """The process's resident high-water mark (MB; ``benchmarks._scale_child`` resets it at the start)."""
    try:
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")) / 1024
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure_train_purchase(size: ShopSize, shop: ShopFiles, workdir: Path) -> Measured:
    return _train("purchase", workdir)


def measure_train_recommendation(size: ShopSize, shop: ShopFiles, workdir: Path) -> Measured:
    return _train("recommendation", workdir)


def measure_export(size: ShopSize, shop: ShopFiles, workdir: Path) -> Measured:
    """``shard_bundle`` of the purchase bundle ``train_purchase`` kept."""
    from shared.ml.scoring import shard_bundle

    data = (workdir / "purchase-bundle.npz").read_bytes()
    started = time.perf_counter()
    shards = shard_bundle(data)
    seconds = time.perf_counter() - started
    return Measured(
        seconds=seconds,
        calls=len(shards),
        notes=f"{len(shards)} shards, {sum(map(len, shards)) / 1e6:.1f} MB "
        f"from a {len(data) / 1e6:.0f} MB bundle",
    )


def _before(model_type: str, workdir: Path) -> Measured:
    code = workdir.parent / f"code-{BEFORE_COMMIT}"
    if not (code / "shared").exists():
        archive = subprocess.run(
            ["git", "archive", BEFORE_COMMIT, "shared", "tools"], cwd=ROOT, check=True, capture_output=True
        ).stdout
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(code, filter="data")
    child = subprocess.run(
        [sys.executable, "-c", _BEFORE_SCRIPT, str(_arrays_path(workdir)), model_type],
        cwd=code,
        capture_output=True,
        text=True,
    )
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    if child.returncode != 0:
        return Measured(
            seconds=float("nan"),
            calls=0,
            notes=f"failed: {child.stderr.strip().splitlines()[-1][:200]}",
            extra={"peak_mb": peak_mb},
        )
    result = json.loads(child.stdout.strip().splitlines()[-1])
    return Measured(
        seconds=result["seconds"],
        calls=1,
        notes=f"the code before the rewrite ({BEFORE_COMMIT}), fed one record per order line; "
        f"{result['metric']}",
        extra={"peak_mb": peak_mb},
    )


# Run in the old checkout: records from the arrays (as its loader made them from files), then training.
_BEFORE_SCRIPT = """
import json, sys, time
from datetime import UTC, datetime, timedelta
import numpy as np
from shared.ml.datasets import CustomerRecord, OrderRecord, ProductRecord, ShopData
from shared.ml.training import train_model
started = time.perf_counter()
with np.load(sys.argv[1], allow_pickle=False) as a:
    arrays = {name: a[name] for name in a.files}
epoch = datetime(1970, 1, 1, tzinfo=UTC)
users, products = arrays["user_ids"].tolist(), arrays["product_ids"].tolist()
categories = arrays["categories"].tolist()
data = ShopData(
    customers=[CustomerRecord.model_construct(user_id=u) for u in users],
    products=[
        ProductRecord.model_construct(product_id=p, category=categories[c], price=float(price))
        for p, c, price in zip(
            products, arrays["product_category"].tolist(), arrays["product_price"].tolist()
        )
    ],
    orders=[
        OrderRecord.model_construct(
            order_id=f"o{k}", user_id=users[u], product_id=products[p], quantity=int(q), amount=m,
            timestamp=epoch + timedelta(days=d),
        )
        for u, p, d, q, m, k in zip(
            arrays["order_user"].tolist(), arrays["order_product"].tolist(), arrays["order_day"].tolist(),
            arrays["order_units"].tolist(), arrays["order_amount"].tolist(), arrays["order_key"].tolist(),
        )
    ],
)
del arrays
model = train_model(data, name="before", model_type=sys.argv[2])
metric = "roc_auc" if sys.argv[2] == "purchase" else "ndcg_at_10"
seconds = time.perf_counter() - started
print(json.dumps({"seconds": seconds, "metric": f"{metric} {model.metrics[metric]:.3f}"}))
"""


def measure_train_purchase_before(size: ShopSize, shop: ShopFiles, workdir: Path) -> Measured:
    return _before("purchase", workdir)


def measure_train_recommendation_before(size: ShopSize, shop: ShopFiles, workdir: Path) -> Measured:
    return _before("recommendation", workdir)
