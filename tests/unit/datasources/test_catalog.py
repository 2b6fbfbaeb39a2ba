"""The synced catalog searched by product id and name (issue 23, item 4): the catalog a sync keeps,
ranked matches bounded by the limit, and the count of all matches."""

from __future__ import annotations

import numpy as np

from shared.datasources.catalog import Catalog, Catalogs, search_catalog
from shared.datasources.models import SyncRequest
from tests.unit.datasources.conftest import ORG, DataSourceWorld

CATALOG = Catalog(
    product_ids=np.array(["MUG-1", "MUG-10", "P-7", "TEA-1", "TEA-2", "mugwort"]),
    names=np.array(["Blue mug", "Tall mug", "Mug cosy", "Green tea", "", "Herb"]),
    categories=np.array(["Kitchen", "Kitchen", "Kitchen", "Food", "", "Garden"]),
)


def found(text: str, limit: int = 10) -> tuple[list[str], int]:
    result = search_catalog(CATALOG, text, limit)
    return CATALOG.product_ids[result.positions].tolist(), result.matches


def test_the_exact_id_comes_first_then_ids_then_names_that_start_with_the_text() -> None:
    # When the catalog is searched for "mug-1" (case ignored)
    # Then the exact id first, then the id that starts with it; names only contain "mug", not "mug-1"
    assert found("mug-1") == (["MUG-1", "MUG-10"], 2)
    # And for "mug": ids starting with it, the name starting with it, then names with the word
    assert found("mug") == (["MUG-1", "MUG-10", "mugwort", "P-7"], 4)


def test_a_name_is_found_by_any_word_and_by_any_part() -> None:
    assert found("tea") == (["TEA-1", "TEA-2"], 2)  # by id first; "Green tea" is TEA-1's own name
    assert found("green") == (["TEA-1"], 1)
    assert found("osy") == (["P-7"], 1)


def test_the_answer_is_bounded_by_the_limit_and_counts_every_match() -> None:
    assert found("mug", limit=2) == (["MUG-1", "MUG-10"], 4)


def test_no_text_gives_the_first_products_by_id_and_nothing_matching_gives_none() -> None:
    assert found("  ", limit=3) == (["MUG-1", "MUG-10", "P-7"], 6)
    assert found("sofa") == ([], 0)


def test_a_synced_catalog_is_searched_through_the_data_source(world: DataSourceWorld) -> None:
    # Given a synced shop whose products have names
    customers = b"user_id,email\nu1,ann@example.com\n"
    products = b"product_id,name,category,price\n1234567890123456789,Blue mug,Kitchen,9.5\np2,Green tea,,4\n"
    orders = b"order_id,user_id,product_id,quantity,amount,timestamp\no1,u1,p2,1,4,2026-10-01T10:00:00\n"
    request = SyncRequest.model_validate({"files": world.put_files(customers, products, orders)})
    started = world.service.start_sync(ORG, request, world.start)
    world.service.run_sync(ORG, started.sync_id)
    world.train_purchase(started.sync_id)

    # When the wizard searches its products by name
    answer = world.service.search_products(ORG, "MUG", limit=20)

    # Then the product is found with its id as text (an id too long for a JavaScript number stays whole)
    body = answer.model_dump(by_alias=True)
    assert body["products"] == [
        {"productId": "1234567890123456789", "name": "Blue mug", "category": "Kitchen"}
    ]
    assert (body["matches"], body["catalogSize"], body["datasetVersion"]) == (1, 2, started.sync_id)
    # And a product without a category says so
    assert world.service.search_products(ORG, "p2", limit=20).products[0].category is None


def test_before_any_sync_no_product_is_found(world: DataSourceWorld) -> None:
    answer = world.service.search_products(ORG, "mug", limit=20)
    assert (answer.products, answer.matches, answer.dataset_version) == ([], 0, None)


def test_the_synced_products_say_which_product_is_listed_and_priced(world: DataSourceWorld) -> None:
    # Given a shop not synced yet
    catalogs = Catalogs(world.datasets, world.blobs)
    assert catalogs.listing(ORG, "p-mug") == "no_products"
    # When it syncs a mug at 12.50, a gift card without a price and a voucher at 0
    customers = b"user_id,email\nu1,ann@example.com\n"
    products = b"product_id,name,price\np-mug,Mug,12.50\np-gift,Gift card,\np-free,Voucher,0\n"
    orders = b"order_id,user_id,product_id,quantity,amount,timestamp\no1,u1,p-mug,1,12.5,2026-10-01T10:00\n"
    request = SyncRequest.model_validate({"files": world.put_files(customers, products, orders)})
    started = world.service.start_sync(ORG, request, world.start)
    assert world.service.run_sync(ORG, started.sync_id).state == "synced"
    world.train_purchase(started.sync_id)
    # Then the catalog says which the hosted checkout's page could sell (a price above 0), as it reads them
    listed = {product: catalogs.listing(ORG, product) for product in ("p-mug", "p-gift", "p-free", "p-tea")}
    assert listed == {"p-mug": "priced", "p-gift": "no_price", "p-free": "no_price", "p-tea": "unlisted"}
