"""The Models page in a real browser: each model's metrics, freshness, drift and training users, and a
retrain on the data in force followed to its end."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from local.stack import LocalStack
from shared import wiring
from tests.integration.browser.conftest import (
    DESKTOP,
    PHONE,
    ShopUser,
    axe_violations,
    dump,
    make_synced_user,
    sign_in,
)
from tests.integration.patience import BACKGROUND_JOB_MS

pytestmark = pytest.mark.integration


def test_the_models_page_shows_each_models_health_and_retrains_both(
    page: Page, stack: LocalStack, synced_user: ShopUser, screenshots: Path
) -> None:
    # Given: an organization whose synced shop trained both models
    listed = httpx.get(f"{stack.api_url}/dashboard/models", headers=synced_user.org.headers).json()
    before = {m["name"]: m for m in listed["models"]}
    assert set(before) == {"shop-purchase", "shop-recommendations"}
    sign_in(page, synced_user.email, synced_user.password)

    # When
    page.get_by_role("link", name="Models").click()

    # Then: each model shows its training users, metrics, freshness and drift in words
    purchase = page.get_by_role("region", name="shop-purchase")
    expect(purchase.locator(".training-users")).to_have_text(
        f"{before['shop-purchase']['trainingUserCount']:,}"
    )
    assert 0 < before["shop-purchase"]["trainingUserCount"] <= 300
    expect(purchase.locator("table.metrics tbody tr")).to_have_count(len(before["shop-purchase"]["metrics"]))
    # And each metric says what it means and what its value says, in words
    roc = purchase.locator("tr[data-metric=roc_auc]")
    expect(roc).to_contain_text("Ranking of buyers (ROC AUC)")
    expect(roc).to_contain_text("0.5 is a coin flip")
    words = {w["name"]: w for w in before["shop-purchase"]["metricWords"]}
    expect(roc).to_contain_text(words["roc_auc"]["verdict"])
    expect(purchase.locator("tr[data-metric=holdout_pairs]")).to_contain_text("pairs the model was tested on")
    # And each says in words what it beat to be made current, and by how much
    for name, region in (("shop-purchase", purchase), ("shop-recommendations", None)):
        gate = before[name]["qualityGate"]
        assert gate["passed"], gate
        shown = region or page.get_by_role("region", name=name)
        expect(shown.locator(".quality-gate")).to_contain_text(gate["sentence"])
        expect(shown.locator(".quality-gate")).to_contain_text("Beats the simple methods")
    # And the page says which model the wizard uses, and why the other is not used
    expect(page.locator("#wizard-models")).to_contain_text("The launch wizard targets with shop-purchase")
    expect(purchase.locator(".wizard-use")).to_contain_text("In the launch wizard")
    recommendations = page.get_by_role("region", name="shop-recommendations")
    expect(recommendations.locator(".wizard-use")).to_contain_text("API only")
    expect(recommendations.locator(".wizard-use")).to_contain_text("ranks products for one customer")
    expect(purchase.locator(".freshness")).to_contain_text("Fresh")
    expect(purchase).to_contain_text("Not measured")
    expect(purchase).to_contain_text(before["shop-purchase"]["version"])
    expect(recommendations).to_contain_text("Trained")
    # And a model trained minutes ago is said to be, in words (it read "(0 days ago)")
    expect(purchase.locator("dd.trained")).to_contain_text("(less than a day ago)")
    violations = axe_violations(page)
    for label, size in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(size)
        page.screenshot(path=screenshots / f"models-synced-{label}.png", full_page=True)
    page.set_viewport_size(DESKTOP)
    assert not violations, dump(violations)

    # When: both are retrained on the current data
    page.get_by_role("button", name="Retrain both models").click()

    # Then: the page follows the training to new versions
    expect(page.get_by_role("status")).to_have_text(
        "Training finished: the models below are the new versions.", timeout=BACKGROUND_JOB_MS
    )
    after = {
        m["name"]: m
        for m in httpx.get(f"{stack.api_url}/dashboard/models", headers=synced_user.org.headers).json()[
            "models"
        ]
    }
    assert after["shop-purchase"]["version"] != before["shop-purchase"]["version"]
    assert after["shop-purchase"]["datasetVersion"] != before["shop-purchase"]["datasetVersion"]
    expect(purchase).to_contain_text(after["shop-purchase"]["version"])
    expect(page.get_by_role("button", name="Retrain both models")).to_be_enabled()


def test_after_a_sync_whose_training_failed_the_page_says_the_data_synced_before_is_still_in_use(
    page: Page, stack: LocalStack
) -> None:
    # Given a shop of its own, synced and trained, then synced again with three customers and three
    # order lines, on which both trainings fail (walking make dev, that sync replaced the shop's data)
    from tests.integration.test_data_source import upload_shop, wait_for_sync

    user = make_synced_user(stack)
    tiny = {
        "customers": b"user_id,email\nx1,x1@example.com\nx2,x2@example.com\nx3,x3@example.com\n",
        "products": b"product_id,name,category,price\nq1,Thing,cat,10\n",
        "orders": b"order_id,user_id,product_id,quantity,amount,timestamp\n"
        b"o1,x1,q1,1,10,2026-11-01T10:00:00Z\no2,x2,q1,1,10,2026-11-02T10:00:00Z\n"
        b"o3,x3,q1,1,10,2026-11-03T10:00:00Z\n",
    }
    with httpx.Client(base_url=stack.api_url, timeout=60) as api:
        before = api.get("/platform-ads/data-source", headers=user.org.headers).json()["current"]["version"]
        started = api.post(
            "/platform-ads/data-source/sync",
            json={"uploadId": upload_shop(api, user.org, tiny)},
            headers=user.org.headers,
        )
        assert started.status_code == 202, started.text
        failed = started.json()["syncId"]
        wait_for_sync(api, user.org, failed, trained=True)
    sign_in(page, user.email, user.password)

    # When the Models page is opened
    page.get_by_role("link", name="Models").click()

    # Then it says plainly that the latest sync is not in use and the data synced before still is
    expect(page.locator("#training-summary")).to_have_text(
        f"The latest sync (version {failed}) is not in use: the purchase model could not be trained on it "
        f"(see below). The data synced before, version {before}, is still in use for audiences, segments "
        "and Retrain."
    )
    # And the purchase model's card says why, on that sync, and what to do
    training = page.get_by_role("region", name="shop-purchase").locator(".training")
    expect(training).to_contain_text(f"On the latest sync ({failed}, not in use):")
    expect(training).to_contain_text("Training failed")
    expect(training).to_contain_text("Training needs at least 20 order lines; got 3.")
    # And Retrain (on the data in force) is offered
    expect(page.get_by_role("button", name="Retrain both models")).to_be_enabled()


def test_a_training_under_way_says_its_stage_in_words(
    page: Page, stack: LocalStack, synced_user: ShopUser
) -> None:
    # Given the shop's recommendation model training, at the stage where its repeat model learns the
    # latest orders (the training job's stage id "refit")
    datasets = wiring.dataset_store()
    newest = datasets.latest(synced_user.org.org_id)
    assert newest is not None
    ended = newest.training["recommendation"]
    datasets.record_training(
        synced_user.org.org_id,
        newest.version,
        "recommendation",
        ended.model_copy(update={"state": "running", "stage": "refit"}),
    )
    try:
        # When the Models page is opened
        sign_in(page, synced_user.email, synced_user.password)
        page.get_by_role("link", name="Models").click()

        # Then the stage is said in words, never as the job's id
        training = page.get_by_role("region", name="shop-recommendations").locator(".training")
        expect(training).to_contain_text("Training · learning from the latest orders too")
        expect(training).not_to_contain_text("refit")
    finally:
        datasets.record_training(synced_user.org.org_id, newest.version, "recommendation", ended)
