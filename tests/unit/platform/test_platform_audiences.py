"""Custom Audiences, uploads and lookalikes: one request each, typed results."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from shared.errors import ValidationFailed
from shared.platform.audiences import (
    INT64_MAX,
    CreatedObject,
    UploadBatch,
    UploadResult,
    UploadSession,
    add_users,
    create_custom_audience,
    create_lookalike,
    delete_custom_audience,
    replace_users,
)
from shared.platform.client import GraphClient
from shared.platform.errors import LookalikesExist, PlatformRequestFailed
from tests.unit.platform.fake_graph import FakeGraph, graph_error

HASH = "f1904cf1a9d73a55fa5de0ac823c4403ded71afd4c3248d00bdcd0866552bb79"


def first_batch(rows: list[list[str]]) -> UploadBatch:
    """``rows`` as batch 1 of session 9778993, which carries just them."""
    return UploadBatch(
        session=UploadSession(session_id=9778993, total_rows=len(rows)), batch_seq=1, rows=rows
    )


def test_a_custom_audience_is_created_as_a_user_provided_customer_list(
    client: GraphClient, fake_graph: FakeGraph
) -> None:
    # Given
    fake_graph.reply({"id": "238"})
    # When
    created = create_custom_audience(client, "42", "Likely buyers", "Predicted buyers")
    # Then
    assert created == CreatedObject(id="238")
    assert fake_graph.last.url.path == "/v25.0/act_42/customaudiences"
    form = fake_graph.form()
    form.pop("appsecret_proof")
    assert form == {
        "name": "Likely buyers",
        "description": "Predicted buyers",
        "subtype": "CUSTOM",
        "customer_file_source": "USER_PROVIDED_ONLY",
    }


def test_deleting_a_seed_with_lookalikes_raises_lookalikes_exist(
    client: GraphClient, fake_graph: FakeGraph
) -> None:
    # Given
    fake_graph.reply(graph_error(2656), status=400)
    # When / Then
    with pytest.raises(LookalikesExist):
        delete_custom_audience(client, "238")
    assert fake_graph.last.method == "DELETE"


def test_users_are_added_with_payload_and_session_as_json_in_the_body(
    client: GraphClient, fake_graph: FakeGraph
) -> None:
    # Given
    fake_graph.reply(
        {
            "audience_id": "238",
            "session_id": "9778993",
            "num_received": 2,
            "num_invalid_entries": 1,
            "invalid_entry_samples": {"bad": "EMAIL"},
        }
    )
    # When
    result = add_users(client, "238", ["EMAIL", "FN"], first_batch([[HASH, HASH], [HASH, ""]]))
    # Then
    assert fake_graph.last.url.path == "/v25.0/238/users"
    assert fake_graph.json_body()["payload"] == {
        "schema": ["EMAIL", "FN"],
        "data": [[HASH, HASH], [HASH, ""]],
        "is_raw": True,
    }
    assert fake_graph.json_body()["session"] == {
        "session_id": 9778993,
        "batch_seq": 1,
        "last_batch_flag": True,
        "estimated_num_total": 2,
    }
    assert result == UploadResult(
        num_received=2, num_invalid_entries=1, invalid_entry_samples_count=1, session_id="9778993"
    )


def test_adding_users_is_retried_on_a_transient_error(client: GraphClient, fake_graph: FakeGraph) -> None:
    # Given: re-adding the same people does not duplicate them
    fake_graph.reply(graph_error(2), status=500)
    fake_graph.reply({"num_received": 1, "num_invalid_entries": 0, "invalid_entry_samples": []})
    # When
    result = add_users(client, "238", ["EMAIL"], first_batch([[HASH]]))
    # Then
    assert result.num_received == 1
    assert len(fake_graph.requests) == 2


def test_replacing_users_is_not_retried_when_the_batch_may_have_landed(
    client: GraphClient, fake_graph: FakeGraph
) -> None:
    # Given
    fake_graph.reply(graph_error(2), status=500)
    # When
    with pytest.raises(PlatformRequestFailed):
        replace_users(client, "238", ["EMAIL"], first_batch([[HASH]]))
    # Then
    assert fake_graph.last.url.path == "/v25.0/238/usersreplace"
    assert len(fake_graph.requests) == 1


def test_more_than_ten_thousand_rows_are_refused_before_sending(
    client: GraphClient, fake_graph: FakeGraph
) -> None:
    # Given
    rows = [[HASH]] * 10_001
    # When / Then
    with pytest.raises(ValidationFailed):
        add_users(client, "238", ["EMAIL"], first_batch(rows))
    assert fake_graph.requests == []


def test_rows_must_match_the_schema_width(client: GraphClient) -> None:
    # Given / When / Then
    with pytest.raises(ValidationFailed, match="one value per schema column"):
        add_users(client, "238", ["EMAIL", "FN"], first_batch([[HASH]]))


@pytest.mark.parametrize("session_id", [0, -1, INT64_MAX + 1])
def test_upload_session_ids_must_be_positive_int64(session_id: int) -> None:
    # Given / When / Then
    with pytest.raises(ValidationError):
        UploadSession(session_id=session_id, total_rows=1)


def test_a_lookalike_is_created_from_its_seed_with_a_json_spec(
    client: GraphClient, fake_graph: FakeGraph
) -> None:
    # Given
    fake_graph.reply({"id": "239"})
    # When
    created = create_lookalike(client, "act_42", "Lookalike 1% GB", "238", 0.01, "gb")
    # Then
    assert created.id == "239"
    assert fake_graph.last.url.path == "/v25.0/act_42/customaudiences"
    assert fake_graph.form()["subtype"] == "LOOKALIKE"
    assert fake_graph.form()["origin_audience_id"] == "238"
    assert fake_graph.json_field("lookalike_spec") == {"country": "GB", "ratio": 0.01}


def test_a_lookalike_ratio_outside_the_platform_range_is_refused(client: GraphClient) -> None:
    # Given / When / Then
    with pytest.raises(ValidationFailed) as raised:
        create_lookalike(client, "42", "Too wide", "238", 0.5, "US")
    assert raised.value.field == "ratio"
