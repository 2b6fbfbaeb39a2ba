"""Products searchable by name and id from the synced catalog (issue 23, item 4), in Chromium: with "Use
the current data" (no file in the browser), the targeting step's product field is a combobox over GET
/platform-ads/data-source/products, usable from the keyboard, and the chosen product's id drives the
preview."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from local.stack import LocalStack
from tests.integration.browser.conftest import DESKTOP, PHONE, ShopUser, axe_violations, dump, sign_in

pytestmark = pytest.mark.integration


def test_a_product_is_found_by_name_chosen_from_the_keyboard_and_previewed(
    page: Page, stack: LocalStack, synced_user: ShopUser, screenshots: Path
) -> None:
    # Given: a synced shop, and what its catalog search answers for "garden"
    with httpx.Client(base_url=stack.api_url, timeout=30) as api:
        answer = api.get(
            "/platform-ads/data-source/products",
            params={"search": "garden", "limit": 20},
            headers=synced_user.org.headers,
        ).json()
    assert answer["products"], "the demo shop has garden products"

    # When: the marketer uses the current data (no file in this browser) and types part of a name
    sign_in(page, synced_user.email, synced_user.password)
    page.goto("/wizard.html")
    page.get_by_role("button", name="Use the current data").click()
    page.get_by_role("button", name="Continue to readiness").click()
    page.get_by_role("button", name="Continue", exact=True).click()
    page.get_by_role("button", name="Continue to targeting").click()
    field = page.get_by_role("combobox", name="Product ID")
    field.fill("Garden")

    # Then: the catalog's matches are offered, named and with their ids, and counted
    listbox = page.get_by_role("listbox", name="Products in your catalog")
    expect(listbox).to_be_visible()
    expect(field).to_have_attribute("aria-expanded", "true")
    options = listbox.get_by_role("option")
    expect(options).to_have_text([f"{p['name']} {p['productId']}" for p in answer["products"]])
    shown = len(answer["products"])
    expect(page.locator("#product-search-status")).to_have_text(
        f"{answer['matches']:,} products match; the first {shown} are listed. Type more to narrow them."
        if answer["matches"] > shown
        else f"{answer['matches']:,} products match."
    )
    violations = axe_violations(page)
    for label, size in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(size)
        page.screenshot(path=screenshots / f"wizard-5-product-search-{label}.png", full_page=True)
    page.set_viewport_size(DESKTOP)
    assert not violations, dump(violations)

    # When: the second option is chosen with the arrow keys and Enter
    field.press("ArrowDown")
    field.press("ArrowDown")
    expect(options.nth(1)).to_have_attribute("aria-selected", "true")
    expect(field).to_have_attribute("aria-activedescendant", "product-option-1")
    field.press("Enter")

    # Then: its id is in the field, its name under it, the list closed, and the preview is of it
    second = answer["products"][1]
    expect(field).to_have_value(second["productId"])
    expect(page.locator("#product-chosen")).to_have_text(f"{second['name']} · {second['category']}")
    expect(listbox).to_be_hidden()
    expect(field).to_have_attribute("aria-expanded", "false")
    expect(page.locator("#preview-summary")).to_contain_text("will be uploaded")

    # When: the page is reloaded (the draft keeps the field)
    page.reload()
    # Then: the product is named again under its id, and the list stays closed
    expect(field).to_have_value(second["productId"])
    expect(page.locator("#product-chosen")).to_have_text(f"{second['name']} · {second['category']}")
    expect(listbox).to_be_hidden()

    # When: an id is typed in full instead
    field.fill("p00002")
    # Then: it is recognised as that product without a choice
    expect(page.locator("#product-chosen")).to_have_text("Premium Accessories 2 · Accessories")
    expect(listbox).to_be_hidden()


def test_the_search_answers_ids_as_text_bounded_and_refuses_a_limit_out_of_range(
    stack: LocalStack, synced_user: ShopUser
) -> None:
    with httpx.Client(base_url=stack.api_url, timeout=30) as api:
        # Given / When: the catalog is searched with a small limit
        answer = api.get(
            "/platform-ads/data-source/products",
            params={"search": "p0000", "limit": 3},
            headers=synced_user.org.headers,
        )
        # Then: at most the limit, ids as text, and the count of all matches
        assert answer.status_code == 200, answer.text
        body = answer.json()
        assert [p["productId"] for p in body["products"]] == ["p00000", "p00001", "p00002"]
        assert (body["matches"], body["catalogSize"]) == (10, 40)
        # And a limit past 50 is refused
        refused = api.get(
            "/platform-ads/data-source/products", params={"limit": 500}, headers=synced_user.org.headers
        )
        assert refused.status_code == 400
        # And without a token nothing is answered
        assert api.get("/platform-ads/data-source/products").status_code == 401
