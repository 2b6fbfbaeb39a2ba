"""The mapping step's server half (issue 23, item 1): a file whose header is neither the service's nor a
shop export is synced with the columns the merchant matched; the mapping is checked (service columns
only, none twice), kept with the sync, and offered back for the organization's next sync."""

from __future__ import annotations

import pytest

from shared.datasources.models import SyncRequest
from shared.errors import ValidationFailed
from tests.unit.datasources.conftest import ORG, DataSourceWorld
from tests.unit.datasources.test_sync import CUSTOMERS, PRODUCTS

# An order items report from some other system: its own column names, one the service does not use.
ITEMS = (
    b"Order No.;Client;Article;Qty;Line total;Ordered on;Warehouse\n"
    b"o1;u1;p1;1;9.5;2026-10-01 10:00:00;North\n"
    b"o2;u3;p2;2;8;2026-10-03 10:00:00;South\n"
)
MAPPING = {
    "Order No.": "order_id",
    "Client": "user_id",
    "Article": "product_id",
    "Qty": "quantity",
    "Line total": "amount",
    "Ordered on": "timestamp",
    "Warehouse": "",
}


def start(world: DataSourceWorld, mappings: dict[str, dict[str, str]] | None) -> str:
    keys = world.put_files(CUSTOMERS, PRODUCTS, ITEMS)
    request = SyncRequest.model_validate({"files": keys, "mappings": mappings})
    return world.service.start_sync(ORG, request, world.start).sync_id


def test_a_file_read_with_the_matched_columns_syncs_and_says_so(world: DataSourceWorld) -> None:
    # Given: an orders file in another system's columns, and the merchant's matching of them
    sync_id = start(world, {"orders": MAPPING})

    # When: the sync runs
    ended = world.service.run_sync(ORG, sync_id)

    # Then: every order line is kept, and the report says how the file was read
    assert ended.state == "synced", ended.error
    assert ended.rows_read["orders"] == 2
    assert ended.recognised == {"orders": "you matched its columns"}


def test_without_the_mapping_the_same_file_fails_naming_its_columns(world: DataSourceWorld) -> None:
    sync_id = start(world, None)

    ended = world.service.run_sync(ORG, sync_id)

    assert ended.state == "failed"
    assert ended.error is not None
    assert "has no order_id" in ended.error["message"]


def test_the_mapping_is_offered_back_for_the_organizations_next_sync(world: DataSourceWorld) -> None:
    # Given: a sync with a mapping, then one without any
    world.service.run_sync(ORG, start(world, {"orders": MAPPING}))
    keys = world.put_files(CUSTOMERS, PRODUCTS, b"order_id,user_id,product_id,quantity,amount,timestamp\n")
    world.service.start_sync(ORG, SyncRequest.model_validate({"files": keys}), world.start)

    # When: the wizard reads the data source
    view = world.service.view(ORG)

    # Then: the latest mapping of each file is there, with the service's columns and the known exports
    assert view.mappings == {"orders": MAPPING}
    assert [c.name for c in view.columns["orders"] if c.required] == [
        "order_id",
        "user_id",
        "product_id",
        "quantity",
        "amount",
        "timestamp",
    ]
    postcode = next(c for c in view.columns["customers"] if c.name == "postcode")
    assert (postcode.required, postcode.aliases) == (False, ["zip", "postal_code"])
    assert ("WooCommerce", "orders") in {(layout.system, layout.kind) for layout in view.layouts}


@pytest.mark.parametrize(
    ("mapping", "message"),
    [
        ({**MAPPING, "Warehouse": "warehouse"}, "The orders file has no column warehouse."),
        ({**MAPPING, "Warehouse": "order_id"}, "Two columns of the orders file are matched to order_id."),
        ({**MAPPING, " ": "amount"}, "The orders file's mapping names an empty or overlong header cell."),
        ({**MAPPING, "Warehouse": "email"}, "The orders file has no column email."),
    ],
)
def test_a_mapping_to_no_service_column_or_one_twice_is_refused(
    world: DataSourceWorld, mapping: dict[str, str], message: str
) -> None:
    with pytest.raises(ValidationFailed) as raised:
        start(world, {"orders": mapping})
    assert raised.value.message == message
    assert raised.value.field == "mappings.orders"
    assert world.started == []
