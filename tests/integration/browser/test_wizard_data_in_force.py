"""The wizard's sync step after a sync whose purchase training refused the data: it says which data is
in use, so a merchant knows a bad file replaced nothing (walking make dev, three customers synced over
the demo shop's 1,000 became the data in force), and a young shop whose first sync is too short to train
on knows its data is in use all the same, why no model was trained and what to do (the Models page
says so too)."""

from __future__ import annotations

import uuid

import pytest
from playwright.sync_api import Page, expect

from local.seed import create_user
from local.stack import LocalStack
from tests.integration.browser.conftest import make_synced_user, sign_in
from tests.integration.patience import BACKGROUND_JOB_MS

pytestmark = pytest.mark.integration

TINY = {
    "customers": b"user_id,email\nx1,x1@example.com\nx2,x2@example.com\nx3,x3@example.com\n",
    "products": b"product_id,name,category,price\nq1,Thing,cat,10\n",
    "orders": b"order_id,user_id,product_id,quantity,amount,timestamp\n"
    b"o1,x1,q1,1,10,2026-11-01T10:00:00Z\no2,x2,q1,1,10,2026-11-02T10:00:00Z\n"
    b"o3,x3,q1,1,10,2026-11-03T10:00:00Z\n",
}


def sync_tiny_files(page: Page) -> None:
    page.goto("/wizard.html")
    for kind, data in TINY.items():
        page.get_by_label(f"{kind.capitalize()} file").set_input_files(
            files=[{"name": f"{kind}.csv", "mimeType": "text/csv", "buffer": data}]
        )
    page.get_by_role("button", name="Upload and sync").click()


def test_a_first_sync_whose_training_refused_the_data_is_in_use_and_says_why_no_model_was_trained(
    page: Page, stack: LocalStack
) -> None:
    # Given a new shop with nothing synced
    org_id = f"org-{uuid.uuid4().hex[:8]}"
    _, password = create_user(stack, org_id, f"{org_id}@example.com")
    sign_in(page, f"{org_id}@example.com", password)

    # When three customers and three order lines are synced (too few orders to train on)
    sync_tiny_files(page)

    # Then, once the trainings end, the step says the data is in use, why no model was trained and what
    # to do
    expect(page.locator("#sync-state")).to_contain_text(
        "Your data is in use for the checkout's catalog and audiences (3 customers), but no model could "
        "be trained on it. Training needs at least 20 order lines; got 3. What to do: Sync an orders file "
        "with at least 20 order lines (more of your shop's history).",
        timeout=BACKGROUND_JOB_MS,
    )
    expect(page.get_by_role("button", name="Continue to readiness")).to_be_disabled()

    # And the Models page says the same, with no model card claiming nothing was synced
    page.get_by_role("link", name="Models").click()
    expect(page.locator("#training-summary")).to_contain_text(
        "is in use for the checkout's catalog and audiences, but no model could be trained on it. "
        "Training needs at least 20 order lines; got 3. What to do: Sync an orders file with at least 20 "
        "order lines (more of your shop's history)."
    )
    expect(page.locator("#models")).to_contain_text(
        "No model could be trained on your synced data: the Retrain card above says why and what to do."
    )
    # And Retrain, which would refuse the same rows again, is off and says so
    expect(page.locator("#training-summary")).to_contain_text(
        "Retrain is off: it would train on the same data and refuse it for the same reason."
    )
    expect(page.get_by_role("button", name="Retrain both models")).to_be_disabled()


def test_a_sync_whose_training_refused_the_data_says_the_data_synced_before_is_still_in_use(
    page: Page, stack: LocalStack
) -> None:
    # Given a shop of 300 customers synced and trained
    user = make_synced_user(stack)
    sign_in(page, user.email, user.password)

    # When three other customers and three order lines are synced over it
    sync_tiny_files(page)

    # Then, once the trainings end, the step says the sync replaced nothing and the 300 are in use
    expect(page.locator("#sync-state")).to_contain_text(
        "This sync replaced nothing: your data synced", timeout=BACKGROUND_JOB_MS
    )
    expect(page.locator("#sync-state")).to_contain_text("(300 customers) is still the data in use.")
    expect(page.get_by_role("button", name="Continue to readiness")).to_be_disabled()
