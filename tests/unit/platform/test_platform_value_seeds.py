"""The client's value-based seed requests (docs/platform-notes.md §4.1, issue 15 item 3)."""

from __future__ import annotations

import pytest

from shared.platform.audiences import create_custom_audience, create_lookalike
from shared.platform.client import GraphClient
from shared.platform.errors import LookalikeRejected
from tests.unit.platform.fake_graph import FakeGraph, graph_error


def test_a_value_based_audience_is_created_with_is_value_based(
    client: GraphClient, fake_graph: FakeGraph
) -> None:
    fake_graph.reply({"id": "238"})
    create_custom_audience(client, "42", "Seed", "Predicted buyers", value_based=True)
    assert fake_graph.form()["is_value_based"] == "true"
    assert fake_graph.form()["subtype"] == "CUSTOM"


def test_a_plain_audience_does_not_say_is_value_based(client: GraphClient, fake_graph: FakeGraph) -> None:
    fake_graph.reply({"id": "238"})
    create_custom_audience(client, "42", "Seed", "Predicted buyers")
    assert "is_value_based" not in fake_graph.form()


def test_a_value_based_lookalike_is_asked_for_as_the_sdks_example_does(
    client: GraphClient, fake_graph: FakeGraph
) -> None:
    fake_graph.reply({"id": "239"})
    create_lookalike(client, "act_42", "Lookalike", "238", 0.01, "us", value_based=True)
    assert fake_graph.json_field("lookalike_spec") == {"type": "custom_ratio", "ratio": 0.01, "country": "US"}


def test_the_platforms_refusal_of_a_seed_without_values_names_the_cause_and_remedy(
    client: GraphClient, fake_graph: FakeGraph
) -> None:
    # Given the platform's 2654 for a value-based seed without values
    fake_graph.reply(graph_error(2654, message="(#2654) Source Audience Has No Customer Values"), status=400)
    # When the lookalike is asked for
    with pytest.raises(LookalikeRejected) as raised:
        create_lookalike(client, "act_42", "Lookalike", "238", 0.01, "US", value_based=True)
    # Then the error says a value-based seed needs values, and what to do
    assert "customer value" in raised.value.message
    assert raised.value.remedy is not None
    assert "values" in raised.value.remedy
