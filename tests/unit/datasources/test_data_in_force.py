"""Which synced data is in force: a version is stored by its sync and put in force when its purchase
training ends, so a sync whose training refuses the data never replaces good data.

Walking make dev, a merchant synced a file of three customers and three order lines over the demo
shop's 1,000 customers; both trainings failed ("Training needs at least 20 order lines; got 3") and yet
the three customers became the data in force, which Retrain, targeting and audience syncs then used.

But a young shop whose history is too short to train on has nothing better in force: its first sync
goes in force all the same (its checkout's catalog, audiences and readiness read it; no model is made),
and while no model has accepted a version, a newer refused sync with at least as many customers
replaces it (the merchant's newest data), one with fewer does not (a tiny file never replaces a larger
one). The failing training here is the real training job, on the version the sync stored.
"""

from __future__ import annotations

import pytest

from shared.datasources.failures import StepFailures
from shared.datasources.models import SyncRequest
from shared.errors import Conflict, ValidationFailed
from shared.predictions.training_job import TrainingRequest, run_training
from tests.unit.datasources.conftest import NOW, ORG, DataSourceWorld
from tests.unit.datasources.test_sync import CUSTOMERS, ORDERS, PRODUCTS
from tests.unit.ml.test_serving_gate import Blobs, Models

TINY_CUSTOMERS = b"user_id,email\nx1,x1@example.com\nx2,x2@example.com\nx3,x3@example.com\n"
TINY_PRODUCTS = b"product_id,name,category,price\nq1,Thing,cat,10\n"
TINY_ORDERS = (
    b"order_id,user_id,product_id,quantity,amount,timestamp\n"
    b"o1,x1,q1,1,10,2026-11-01T10:00:00Z\no2,x2,q1,1,10,2026-11-02T10:00:00Z\n"
    b"o3,x3,q1,1,10,2026-11-03T10:00:00Z\n"
)


def sync(world: DataSourceWorld, customers: bytes, products: bytes, orders: bytes) -> str:
    request = SyncRequest.model_validate({"files": world.put_files(customers, products, orders)})
    started = world.service.start_sync(ORG, request, world.start)
    assert world.service.run_sync(ORG, started.sync_id).state == "synced"
    return started.sync_id


FOUR_CUSTOMERS = TINY_CUSTOMERS + b"x4,x4@example.com\n"
FOUR_ORDERS = TINY_ORDERS + b"o4,x4,q1,1,10,2026-11-04T10:00:00Z\n"
# Shops too small to train on, by their number of customers.
REFUSED_SHOPS = {
    3: (TINY_CUSTOMERS, TINY_PRODUCTS, TINY_ORDERS),
    4: (FOUR_CUSTOMERS, TINY_PRODUCTS, FOUR_ORDERS),
}


def train_purchase_for_real(world: DataSourceWorld, version: str) -> None:
    """The state machine's purchase training of ``version``: the training job, recording on the store."""
    stored = world.datasets.get(ORG, version)
    assert stored is not None
    request = TrainingRequest(
        org_id=ORG,
        name="shop-purchase",
        type="purchase",
        training_key=stored.keys["training"],
        dataset_version=version,
    )
    with pytest.raises(ValidationFailed, match="Training needs at least 20 order lines"):
        run_training(request, data=world.blobs, artifacts=Blobs(), models=Models(), progress=world.datasets)


def test_a_sync_whose_purchase_training_fails_leaves_the_data_synced_before_in_force(
    world: DataSourceWorld,
) -> None:
    # Given a shop's data in force (its purchase model trained)
    first = sync(world, CUSTOMERS, PRODUCTS, ORDERS)
    world.train_purchase(first)

    # When three other customers with three order lines are synced, and their purchase training fails
    second = sync(world, TINY_CUSTOMERS, TINY_PRODUCTS, TINY_ORDERS)
    train_purchase_for_real(world, second)

    # Then the data synced before is still in force
    view = world.service.view(ORG)
    assert view.current is not None
    assert view.current.version == first
    assert view.current.row_counts["customers"] == 3
    # And the new version stays listed, newest, with its failure and what to do
    newest = view.versions[0]
    assert newest.version == second
    failed = newest.training["purchase"]
    assert failed.state == "failed"
    assert failed.error == "Training needs at least 20 order lines; got 3."
    assert failed.remedy
    # And Retrain retrains on the data in force, not on the failed sync's files
    in_force = world.datasets.get(ORG, first)
    assert in_force is not None
    world.datasets.record_training(
        ORG,
        second,
        "recommendation",
        newest.training["recommendation"].model_copy(update={"state": "failed"}),
    )
    retrain = world.service.retrain(ORG, world.start)
    retrained = world.datasets.get_sync(ORG, retrain.sync_id)
    assert retrained is not None
    assert retrained.keys == {kind: in_force.keys[kind] for kind in ("customers", "products", "orders")}


def test_a_young_shops_first_sync_refused_for_training_is_in_force_all_the_same(
    world: DataSourceWorld,
) -> None:
    # Given no data before, a first sync whose purchase training refuses the data (too few orders)
    version = sync(world, TINY_CUSTOMERS, TINY_PRODUCTS, TINY_ORDERS)

    # When its training records the refusal
    train_purchase_for_real(world, version)

    # Then the version is in force (nothing better was), its refusal listed with what to do
    view = world.service.view(ORG)
    assert view.current is not None
    assert view.current.version == version
    refused = view.current.training["purchase"]
    assert (refused.state, refused.error) == ("failed", "Training needs at least 20 order lines; got 3.")
    assert refused.remedy
    # And what reads the data in force reads it: the checkout's catalog finds its product
    assert [p.product_id for p in world.service.search_products(ORG, "Thing", 5).products] == ["q1"]


def end_recommendation_training(world: DataSourceWorld, version: str) -> None:
    """``version``'s recommendation training ended (failed), so a retrain does not wait for it."""
    stored = world.datasets.get(ORG, version)
    assert stored is not None
    ended = stored.training["recommendation"].model_copy(update={"state": "failed"})
    world.datasets.record_training(ORG, version, "recommendation", ended)


def test_a_retrain_of_refused_data_in_force_is_refused_with_why_and_what_to_do(
    world: DataSourceWorld,
) -> None:
    # Given a young shop's first sync in force though its training refused it (too few orders)
    version = sync(world, TINY_CUSTOMERS, TINY_PRODUCTS, TINY_ORDERS)
    train_purchase_for_real(world, version)
    end_recommendation_training(world, version)

    # When the merchant retrains: the same rows would be refused by the same check
    with pytest.raises(Conflict, match="Training needs at least 20 order lines; got 3") as refused:
        world.service.retrain(ORG, world.start)

    # Then nothing starts, and the refusal says why and what to do
    assert "would refuse it again" in refused.value.message
    assert refused.value.remedy
    assert [s.sync_id for s in world.datasets.list_syncs(ORG)] == [version]
    assert [sync_id for sync_id, _ in world.started] == [version]


def test_a_retrain_of_data_in_force_whose_training_was_killed_starts(world: DataSourceWorld) -> None:
    # Given data in force whose purchase training was killed (the fault was not the data's)
    version = sync(world, CUSTOMERS, PRODUCTS, ORDERS)
    StepFailures(datasets=world.datasets, clock=lambda: NOW).training_failed(
        ORG, version, "purchase", "Runtime.ExitError"
    )
    end_recommendation_training(world, version)

    # When the merchant retrains, as its remedy says
    retrain = world.service.retrain(ORG, world.start)

    # Then a retrain starts on the same files
    assert world.datasets.get_sync(ORG, retrain.sync_id) is not None


@pytest.mark.parametrize(
    ("first_customers", "newer_customers", "in_force"),
    [(3, 4, "newer"), (4, 3, "first")],
    ids=["more-customers-replace", "fewer-customers-do-not"],
)
def test_a_newer_refused_sync_replaces_a_refused_version_in_force_only_with_at_least_as_many_customers(
    world: DataSourceWorld, first_customers: int, newer_customers: int, in_force: str
) -> None:
    # Given a young shop's first sync in force though its training refused it
    first = sync(world, *REFUSED_SHOPS[first_customers])
    train_purchase_for_real(world, first)

    # When a newer sync is refused too
    newer = sync(world, *REFUSED_SHOPS[newer_customers])
    train_purchase_for_real(world, newer)

    # Then the newest data is in force if it is no smaller (no model accepted either), else the larger
    current = world.datasets.current(ORG)
    assert current is not None
    assert current.version == {"first": first, "newer": newer}[in_force]
    assert current.row_counts["customers"] == max(first_customers, newer_customers)


def test_once_a_model_is_trained_on_a_version_a_refused_sync_never_replaces_it(
    world: DataSourceWorld,
) -> None:
    # Given a refused first sync in force, then a sync whose purchase model is trained (3 customers)
    first = sync(world, *REFUSED_SHOPS[3])
    train_purchase_for_real(world, first)
    refused = world.datasets.current(ORG)
    assert refused is not None
    assert refused.version == first
    trained = sync(world, *REFUSED_SHOPS[3])
    world.train_purchase(trained)

    # When a newer sync with more customers is refused
    train_purchase_for_real(world, sync(world, *REFUSED_SHOPS[4]))

    # Then the version a model was trained on stays in force
    current = world.datasets.current(ORG)
    assert current is not None
    assert current.version == trained


@pytest.mark.parametrize("ending_first", ["older", "newer"])
def test_of_two_first_syncs_refused_side_by_side_only_the_newer_is_in_force(
    world: DataSourceWorld, ending_first: str
) -> None:
    # Given two first syncs of a young shop, both trainings under way with nothing in force
    older = sync(world, TINY_CUSTOMERS, TINY_PRODUCTS, TINY_ORDERS)
    newer = sync(world, TINY_CUSTOMERS, TINY_PRODUCTS, TINY_ORDERS)

    # When both refuse the data, in either order
    for version in [older, newer] if ending_first == "older" else [newer, older]:
        train_purchase_for_real(world, version)

    # Then the newer is in force: the pointer only moved forward, whichever took it first
    current = world.datasets.current(ORG)
    assert current is not None
    assert current.version == newer


def test_a_training_under_way_on_a_sync_not_yet_in_force_refuses_a_retrain(world: DataSourceWorld) -> None:
    # Given data in force, and a newer sync whose models are still pending
    world.train_purchase(sync(world, CUSTOMERS, PRODUCTS, ORDERS))
    sync(world, CUSTOMERS, PRODUCTS, ORDERS)

    # When / Then: a retrain waits for that training rather than starting a second beside it
    with pytest.raises(Conflict, match="shop-purchase"):
        world.service.retrain(ORG, world.start)


def test_an_older_syncs_training_that_ends_last_does_not_replace_a_newer_version_in_force(
    world: DataSourceWorld,
) -> None:
    # Given two syncs, the newer's purchase model trained first
    older = sync(world, CUSTOMERS, PRODUCTS, ORDERS)
    newer = sync(world, CUSTOMERS, PRODUCTS, ORDERS)
    world.train_purchase(newer)

    # When the older's purchase training ends after it
    world.train_purchase(older)

    # Then the newer stays in force, and the older's training is still recorded
    current = world.datasets.current(ORG)
    assert current is not None
    assert current.version == newer
    stored = world.datasets.get(ORG, older)
    assert stored is not None
    assert stored.training["purchase"].state == "succeeded"


def test_a_purchase_training_killed_by_the_platform_still_puts_the_version_in_force(
    world: DataSourceWorld,
) -> None:
    # Given data in force, and a newer sync whose purchase training step is killed (no verdict on the
    # data: the state machine's Record task records it)
    world.train_purchase(sync(world, CUSTOMERS, PRODUCTS, ORDERS))
    newer = sync(world, CUSTOMERS, PRODUCTS, ORDERS)

    # When the failure is recorded
    StepFailures(datasets=world.datasets, clock=lambda: NOW).training_failed(
        ORG, newer, "purchase", "Runtime.ExitError"
    )

    # Then the newer version is in force, its training failed with what to do
    current = world.datasets.current(ORG)
    assert current is not None
    assert current.version == newer
    assert current.training["purchase"].state == "failed"
