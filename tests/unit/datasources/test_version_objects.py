"""A synced version holds what each reader needs (docs/data-plane.md): the tables as Parquet,
``training.npz`` exactly as training encodes the same files, the order lines by product for the lift
report, and per-user aggregates."""

from __future__ import annotations

import io
from pathlib import Path

import duckdb
import numpy as np
import pytest

from shared.audiences.lift import read_product_orders
from shared.datasources.models import SyncRequest
from shared.ml.datasets import dump_records, load_shop_data
from shared.ml.shop_arrays import encode_shop
from shared.records.datasources import DatasetVersion
from tests.unit.datasources.conftest import ORG, DataSourceWorld
from tools.synthetic import SyntheticConfig, generate_shop

SHOP = generate_shop(SyntheticConfig(n_users=300, n_products=40, days=120, seed=3))


def synced(world: DataSourceWorld) -> DatasetVersion:
    files = [
        dump_records(records, "csv")
        for records in (SHOP.data.customers, SHOP.data.products, SHOP.data.orders)
    ]
    request = SyncRequest.model_validate({"files": world.put_files(*files)})
    started = world.service.start_sync(ORG, request, world.start)
    assert world.service.run_sync(ORG, started.sync_id).state == "synced"
    version = world.datasets.latest(ORG)  # stored; in force once its purchase model is trained
    assert version is not None
    return version


def test_training_npz_is_the_shop_as_training_encodes_it(world: DataSourceWorld) -> None:
    # Given a synced shop / When its training arrays are read
    version = synced(world)
    with np.load(io.BytesIO(world.blobs.get(version.keys["training"])), allow_pickle=False) as arrays:
        stored = {name: arrays[name] for name in arrays.files}

    # Then they are what training's own encoder makes of the same data
    expected = encode_shop(
        load_shop_data(
            orders=dump_records(SHOP.data.orders, "csv"),
            customers=dump_records(SHOP.data.customers, "csv"),
            products=dump_records(SHOP.data.products, "csv"),
        )
    )
    assert stored["user_ids"].tolist() == expected.user_ids.tolist()
    assert stored["product_ids"].tolist() == expected.product_ids.tolist()
    assert stored["categories"].tolist() == expected.categories
    assert stored["product_category"].tolist() == expected.product_category.tolist()
    np.testing.assert_array_equal(stored["product_price"], expected.product_price)
    # The order lines in time order (the encoder keeps the file's order, which is by time here)
    order = np.argsort(expected.history.day, kind="stable")
    assert stored["order_user"].tolist() == expected.history.user[order].tolist()
    assert stored["order_product"].tolist() == expected.history.product[order].tolist()
    assert stored["order_key"].tolist() == expected.history.order_key[order].tolist()
    np.testing.assert_allclose(stored["order_day"], expected.history.day[order], rtol=0, atol=1e-9)
    np.testing.assert_array_equal(stored["order_units"], expected.history.units[order].astype(np.float32))
    np.testing.assert_allclose(stored["order_amount"], expected.history.amount[order])
    assert {name: stored[name].dtype.kind for name in ("order_user", "order_product", "order_key")} == {
        "order_user": "i",
        "order_product": "i",
        "order_key": "i",
    }


def test_the_lift_reads_a_products_order_lines_from_the_aggregates(world: DataSourceWorld) -> None:
    # Given a synced shop and one of its products
    version = synced(world)
    product = SHOP.data.products[7].product_id

    # When the lift report's reader takes that product's lines
    lines = read_product_orders(world.blobs, version, product)

    # Then they are exactly that product's orders, by time
    mine = sorted((o for o in SHOP.data.orders if o.product_id == product), key=lambda o: o.timestamp)
    assert lines.line_user_ids() == [o.user_id for o in mine]
    assert lines.times.tolist() == [int(o.timestamp.timestamp() * 1_000_000) for o in mine]
    np.testing.assert_allclose(lines.amounts, [o.amount for o in mine])


def test_an_unknown_product_has_no_order_lines(world: DataSourceWorld) -> None:
    version = synced(world)
    assert read_product_orders(world.blobs, version, "no-such-product").users.size == 0


def test_per_user_aggregates_count_orders_revenue_and_the_last_order(world: DataSourceWorld) -> None:
    version = synced(world)
    with np.load(io.BytesIO(world.blobs.get(version.keys["aggregates"])), allow_pickle=False) as arrays:
        users, orders, revenue, last = (
            arrays["user_ids"],
            arrays["user_orders"],
            arrays["user_revenue"],
            arrays["user_last_order"],
        )
    buyer = SHOP.data.orders[0].user_id
    mine = [o for o in SHOP.data.orders if o.user_id == buyer]
    at = int(np.searchsorted(users, buyer))
    assert orders[at] == len({o.order_id for o in mine})
    assert revenue[at] == pytest.approx(sum(o.amount for o in mine))
    assert last[at] == int(max(o.timestamp for o in mine).timestamp() * 1_000_000)


def test_the_tables_are_parquet_with_the_contracts_columns(world: DataSourceWorld, tmp_path: Path) -> None:
    # Given a synced shop / When its customers table is read
    version = synced(world)
    path = tmp_path / "customers.parquet"
    path.write_bytes(world.blobs.get(version.keys["customers"]))
    table = duckdb.connect().execute("SELECT * FROM read_parquet($path)", {"path": str(path)})

    # Then one row per customer, sorted by user_id, with the contract's columns
    assert [column[0] for column in table.description] == [
        "user_id",
        "email",
        "first_name",
        "last_name",
        "phone",
        "country",
        "state",
        "limited_data_use",
        "marketing_consent",
        "city",
        "postcode",
        "date_of_birth",
        "gender",
        "external_id",
        "madid",
    ]
    ids = [row[0] for row in table.fetchall()]
    assert ids == sorted(c.user_id for c in SHOP.data.customers)


def test_retraining_syncs_the_parquet_tables_again(world: DataSourceWorld) -> None:
    # Given a synced shop whose models finished (retrain is refused while they train)
    first = synced(world)
    for model_type in ("purchase", "recommendation"):
        training = first.training[model_type].model_copy(update={"state": "succeeded"})
        world.datasets.record_training(
            ORG, first.version, model_type, training, publish=model_type == "purchase"
        )

    # When retrained, the stored Parquet tables are synced again into a new version of the same rows
    started = world.service.retrain(ORG, world.start)
    ended = world.service.run_sync(ORG, started.sync_id)
    assert ended.state == "synced"
    current = world.datasets.latest(ORG)
    assert current is not None
    assert current.version != first.version
    assert current.row_counts == first.row_counts
    assert current.orders_end == first.orders_end
