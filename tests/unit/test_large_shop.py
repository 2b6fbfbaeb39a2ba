"""The large-shop generator writes files a merchant could upload: every row valid, in the shape asked
for; its bad files break exactly where they say."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from shared.ml.validation import validate_shop_files
from tools.large_shop import LargeShopConfig, bad_orders, duplicate_customers, write_large_shop

CONFIG = LargeShopConfig(n_customers=2_000, n_orders=20_000, n_products=300)
NOW = datetime(2030, 1, 1, tzinfo=UTC)
NAMES = {"customers": "customers.csv", "products": "products.csv", "orders": "orders.csv"}


def test_the_generated_shop_is_valid_and_of_the_size_asked(tmp_path: Path) -> None:
    # When a shop is generated
    files = write_large_shop(tmp_path, CONFIG)

    # Then the sync's validation accepts every row, and each file has the rows asked for
    result = validate_shop_files(
        customers=files.customers.read_bytes(),
        products=files.products.read_bytes(),
        orders=files.orders.read_bytes(),
        names=NAMES,
        now=NOW,
    )
    assert result.rejected == []
    assert result.row_counts == {"customers": 2_000, "products": 300, "orders": 20_000}


def test_the_bad_orders_file_has_every_other_row_broken(tmp_path: Path) -> None:
    # Given a generated shop and its half-malformed orders file
    files = write_large_shop(tmp_path, CONFIG)
    broken = bad_orders(tmp_path / "bad-orders.csv", CONFIG)

    # When validated
    result = validate_shop_files(
        customers=files.customers.read_bytes(),
        products=files.products.read_bytes(),
        orders=broken.read_bytes(),
        names=NAMES,
        now=NOW,
    )

    # Then exactly the even-numbered data lines (every other row) are rejected
    assert result.row_counts["orders"] == 10_000
    assert {error["row"] for error in result.rejected} == set(range(3, 20_002, 2))


def test_the_duplicate_customers_file_repeats_every_tenth_id(tmp_path: Path) -> None:
    # Given a customers file with repeated ids
    files = write_large_shop(tmp_path, CONFIG)
    customers = duplicate_customers(tmp_path / "dup-customers.csv", CONFIG, every=10)

    # When validated (orders of the removed ids are rejected too)
    result = validate_shop_files(
        customers=customers.read_bytes(),
        products=files.products.read_bytes(),
        orders=files.orders.read_bytes(),
        names=NAMES,
        now=NOW,
    )

    # Then one customer in ten is a duplicate, named by its line
    duplicates = [e for e in result.rejected if e["file"] == "customers.csv"]
    assert len(duplicates) == 199
    assert all(e["reason"] == "duplicate user_id; each must appear once" for e in duplicates)
    assert duplicates[0]["row"] == 12
