"""Publish advert: the campaign, ad set, creative and ad requests carry the required fields."""

from __future__ import annotations

import httpx
import pytest

from shared.platform.campaigns import (
    campaign_params,
    create_ad,
    create_adset,
    create_campaign,
    create_creative,
    create_object,
    validate_object,
)
from shared.platform.client import GraphClient
from shared.platform.errors import DevelopmentModeCreative, PaymentMethodRequired, PlatformError
from shared.platform.retry import may_have_executed
from tests.unit.platform.fake_graph import FakeGraph, graph_error


def test_a_campaign_is_a_paused_sales_campaign_with_the_fields_v24_requires(
    client: GraphClient, fake_graph: FakeGraph
) -> None:
    # Given
    fake_graph.reply({"id": "c1"})
    # When
    created = create_campaign(client, "42", "Likely buyers")
    # Then
    assert created.id == "c1"
    assert fake_graph.last.url.path == "/v25.0/act_42/campaigns"
    form = fake_graph.form()
    assert form["objective"] == "OUTCOME_SALES"
    assert form["status"] == "PAUSED"
    assert form["special_ad_categories"] == "[]"
    assert form["is_adset_budget_sharing_enabled"] == "false"


def test_an_adset_optimises_for_purchases_on_the_pixel_for_the_audience(
    client: GraphClient, fake_graph: FakeGraph
) -> None:
    # Given
    fake_graph.reply({"id": "s1", "success": True})
    # When
    create_adset(
        client,
        "42",
        name="Buyers GB",
        campaign_id="c1",
        audience_id="238",
        pixel_id="p1",
        countries=["gb"],
        daily_budget_minor_units=2000,
    )
    # Then
    form = fake_graph.form()
    assert form["optimization_goal"] == "OFFSITE_CONVERSIONS"
    assert form["billing_event"] == "IMPRESSIONS"
    assert form["daily_budget"] == "2000"
    assert fake_graph.json_field("promoted_object") == {"custom_event_type": "PURCHASE", "pixel_id": "p1"}
    assert fake_graph.json_field("targeting") == {
        "custom_audiences": [{"id": "238"}],
        "geo_locations": {"countries": ["GB"]},
        "targeting_automation": {"advantage_audience": 0},
    }
    assert "dsa_payor" not in form


def test_a_creative_is_a_link_ad_posted_as_the_page(client: GraphClient, fake_graph: FakeGraph) -> None:
    # Given
    fake_graph.reply({"id": "cr1"})
    # When
    create_creative(
        client, "42", name="Ad", page_id="pg1", link="https://shop.test/p", message="New!", headline="Buy"
    )
    # Then
    assert fake_graph.json_field("object_story_spec") == {
        "page_id": "pg1",
        "link_data": {
            "link": "https://shop.test/p",
            "message": "New!",
            "name": "Buy",
            "call_to_action": {"type": "SHOP_NOW", "value": {"link": "https://shop.test/p"}},
        },
    }


def test_a_creative_from_an_app_in_development_mode_raises_the_spec_error(
    client: GraphClient, fake_graph: FakeGraph
) -> None:
    # Given
    fake_graph.reply(graph_error(100, 1885183, is_transient=False), status=400)
    # When
    with pytest.raises(DevelopmentModeCreative) as raised:
        create_creative(
            client, "42", name="Ad", page_id="pg1", link="https://shop.test", message="m", headline="h"
        )
    # Then
    assert raised.value.remedy == (
        "Use Generate campaign with audience and build the ad manually in the platform's ads manager."
    )


def test_an_ad_joins_the_adset_and_creative(client: GraphClient, fake_graph: FakeGraph) -> None:
    # Given
    fake_graph.reply({"id": "ad1", "success": True})
    # When
    created = create_ad(client, "act_42", name="Ad", adset_id="s1", creative_id="cr1")
    # Then
    assert created.id == "ad1"
    assert fake_graph.last.url.path == "/v25.0/act_42/ads"
    assert fake_graph.json_field("creative") == {"creative_id": "cr1"}


def test_an_ad_without_a_payment_method_raises_update_payment_method(
    client: GraphClient, fake_graph: FakeGraph
) -> None:
    # Given
    fake_graph.reply(graph_error(100, 1359188), status=400)
    # When / Then
    with pytest.raises(PaymentMethodRequired, match="Update payment method"):
        create_ad(client, "42", name="Ad", adset_id="s1", creative_id="cr1")


def test_validating_sends_the_same_form_with_validate_only_and_creates_nothing(
    client: GraphClient, fake_graph: FakeGraph
) -> None:
    # Given
    fake_graph.reply({"success": True})
    params = campaign_params("Likely buyers")
    # When
    validate_object(client, "42", "campaigns", params)
    # Then the form is the create's, plus the execution option
    assert fake_graph.last.url.path == "/v25.0/act_42/campaigns"
    assert fake_graph.json_field("execution_options") == ["validate_only"]
    assert fake_graph.form()["objective"] == "OUTCOME_SALES"


@pytest.mark.parametrize(
    ("status", "body", "may_have_run"),
    [
        (500, graph_error(2, is_transient=True), True),  # the answer was lost: it may exist
        (500, graph_error(1), True),  # unknown error
        (400, graph_error(100, 1359188), False),  # a refusal: nothing was created
        (400, graph_error(80004, 2446079), False),  # throttled calls are rejected before they run
    ],
)
def test_a_failed_create_says_whether_it_may_still_have_created_its_object(
    client: GraphClient, fake_graph: FakeGraph, status: int, body: dict[str, object], may_have_run: bool
) -> None:
    # Given the platform answers the create with an error (throttling outlasting the retries)
    for _ in range(6):
        fake_graph.reply(body, status=status)
    # When
    with pytest.raises(PlatformError) as raised:
        create_object(client, "42", "campaigns", campaign_params("Likely buyers"))
    # Then
    assert may_have_executed(raised.value) is may_have_run


def test_a_create_whose_answer_times_out_may_have_run(client: GraphClient, fake_graph: FakeGraph) -> None:
    # Given the request left but no answer came back
    fake_graph.fail(httpx.ReadTimeout)
    # When
    with pytest.raises(PlatformError) as raised:
        create_object(client, "42", "campaigns", campaign_params("Likely buyers"))
    # Then it is not retried (a create has no idempotency key) and may have run
    assert len(fake_graph.requests) == 1
    assert may_have_executed(raised.value) is True
