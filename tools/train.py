"""Train a model from files or synthetic data and write its artifacts to a directory.

Examples::

    python -m tools.train --orders orders.csv --customers customers.csv --products products.jsonl \\
        --name shoes --type purchase --out artifacts/
    python -m tools.train --synthetic 2000 --name demo --type recommendation --out artifacts/

Prints the metrics and the written keys; exits with status 2 and the validation message on bad input.
The three files are read and validated by the data plane's engine, as a sync reads them, into the
training arrays (no Python object per order line); an orders file alone is read record by record.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from tqdm import tqdm

from shared.errors import ValidationFailed
from shared.ml.artifacts import save_trained_model
from shared.ml.datasets import ShopData, load_shop_data
from shared.ml.horizon import MAX_HORIZON_DAYS, MIN_HORIZON_DAYS
from shared.ml.purchase_training import PurchaseOracle
from shared.ml.shop_arrays import EncodedShop, read_training_arrays
from shared.ml.trained import TrainingConfig
from shared.ml.training import baseline_shortfall, train_model
from tools.synthetic import SyntheticConfig, generate_shop

_STAGES = {
    "purchase": ["encode", "features", "fit", "evaluate", "export"],
    "recommendation": ["encode", "tune", "fit", "evaluate", "refit", "export"],
}


class LocalDirectoryStore:
    """Stores each key as a file below ``root`` (keys use ``/`` separators)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def put(self, key: str, data: bytes) -> None:
        """Write ``data`` to ``root/key`` atomically (temp file then rename), creating directories."""
        path = (self.root / key).resolve()
        if not path.is_relative_to(self.root.resolve()):
            raise ValueError(f"artifact key escapes the store root: {key}")
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(path.suffix + ".tmp")
        temporary.write_bytes(data)
        temporary.replace(path)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI with ``argv`` (defaults to ``sys.argv[1:]``); returns the process exit status."""
    args = _parser().parse_args(argv)
    oracle: PurchaseOracle | None = None
    data: ShopData | EncodedShop
    try:
        if args.synthetic:
            shop = generate_shop(
                SyntheticConfig(n_users=args.synthetic, n_products=args.synthetic_products, seed=args.seed)
            )
            data, oracle = shop.data, shop
        else:
            data = _read_files(args.orders, args.customers, args.products)
        config = TrainingConfig(holdout_days=args.horizon_days, algorithm=args.algorithm, seed=args.seed)
        with tqdm(total=len(_STAGES[args.type]), desc=f"training {args.name}", unit="stage") as bar:

            def advance(stage: str) -> None:
                bar.set_postfix_str(stage)
                if stage != "encode":
                    bar.update(1)

            model = train_model(
                data, name=args.name, model_type=args.type, config=config, oracle=oracle, progress=advance
            )
            bar.update(len(_STAGES[args.type]) - bar.n)
        shortfall = baseline_shortfall(args.type, model.metrics)
        if shortfall is not None:
            print(f"warning: not fit to serve: {shortfall}", file=sys.stderr)
    except ValidationFailed as error:
        print(f"error: {error.message}", file=sys.stderr)
        if error.remedy:
            print(f"remedy: {error.remedy}", file=sys.stderr)
        return 2
    keys = save_trained_model(model, LocalDirectoryStore(args.out))
    print(
        json.dumps(
            {"model": model.name, "version": model.version, "metrics": model.metrics, "keys": keys}, indent=2
        )
    )
    return 0


def _read_files(orders: Path, customers: Path | None, products: Path | None) -> ShopData | EncodedShop:
    """The shop of the files as training arrays, read and validated by the data plane's engine as a
    sync does (no object per order line); one rejected row fails the run, naming file, row and field.
    Without a customers or products file the record loader reads the orders (small shops only)."""
    if customers is None or products is None:
        return load_shop_data(orders=orders, customers=customers, products=products)
    from shared.dataplane.engine import session
    from shared.datasources.sync import SyncFile, check_shop, write_training

    paths = {"customers": customers, "products": products, "orders": orders}
    with session() as workspace:
        files = {kind: SyncFile(path, path.name) for kind, path in paths.items()}
        check = check_shop(workspace, files, datetime.now(UTC), shown=_SHOWN_ERRORS)
        if check.rejected_count:
            listed = "; ".join(
                f"{e['file']} row {e['row']} {e['field']}: {e['reason']}" for e in check.rejected_rows
            )
            raise ValidationFailed(
                f"{check.rejected_count} problems in the files: {listed}",
                remedy="Fix the rows named and run again.",
            )
        return read_training_arrays(write_training(workspace).read_bytes())


_SHOWN_ERRORS = 5


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m tools.train", description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--orders", type=Path, help="orders file (.csv or .jsonl)")
    source.add_argument("--synthetic", type=int, metavar="N_USERS", help="generate a synthetic shop instead")
    parser.add_argument("--customers", type=Path, help="customers file (.csv or .jsonl)")
    parser.add_argument("--products", type=Path, help="products file (.csv or .jsonl)")
    parser.add_argument("--synthetic-products", type=int, default=300, help="synthetic catalogue size")
    parser.add_argument("--name", required=True, help="model name (the API's modelName)")
    parser.add_argument("--type", choices=["purchase", "recommendation"], default="purchase")
    parser.add_argument("--algorithm", choices=["two_part", "logistic"], default="two_part")
    parser.add_argument(
        "--horizon-days",
        "--holdout-days",
        type=int,
        default=None,
        help=f"prediction horizon in days ({MIN_HORIZON_DAYS}-{MAX_HORIZON_DAYS}; default 30, or the longest "
        "the history allows); the holdout has the same length",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True, help="directory to write artifacts into")
    return parser


if __name__ == "__main__":
    raise SystemExit(main())
