"""Custom audiences, uploads with sessions, replace and lookalikes (docs/platform-notes.md §2-§4)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from platform_sandbox import SandboxState
from tests.unit.sandbox.samples import ACCOUNT, error_of, hashed_emails, sha256

Graph = Callable[..., TestResponse]
Upload = Callable[..., TestResponse]
CUSTOM = {"name": "Predicted buyers", "subtype": "CUSTOM", "customer_file_source": "USER_PROVIDED_ONLY"}


def members_of(client: FlaskClient, audience_id: str) -> dict[str, Any]:
    body: dict[str, Any] = client.get(f"/_admin/audiences/{audience_id}/members").get_json()
    return body


def lookalike(graph: Graph, origin_id: str, **spec: Any) -> TestResponse:
    body = {"name": "Lookalike", "subtype": "LOOKALIKE", "origin_audience_id": origin_id}
    return graph("POST", f"/{ACCOUNT}/customaudiences", data={**body, "lookalike_spec": json.dumps(spec)})


def seeded_audience(new_audience: Callable[..., str], upload: Upload, size: int = 100) -> str:
    audience_id = new_audience()
    assert upload(audience_id, hashed_emails(size)).status_code == 200
    return audience_id


class TestCreate:
    def test_customer_list_audience_is_created(self, graph: Graph) -> None:
        # When a customer-list audience is created in the business account
        response = graph("POST", f"/{ACCOUNT}/customaudiences", data=CUSTOM)
        # Then it gets an id and waits for its first upload
        audience_id = response.get_json()["id"]
        node = graph("GET", f"/{audience_id}?fields=name,subtype,operation_status").get_json()
        assert node["subtype"] == "CUSTOM"
        assert node["operation_status"]["code"] == 410

    def test_customer_file_source_is_required(self, graph: Graph) -> None:
        # When customer_file_source is left out
        body = {key: value for key, value in CUSTOM.items() if key != "customer_file_source"}
        response = graph("POST", f"/{ACCOUNT}/customaudiences", data=body)
        # Then the platform names the missing parameter
        assert "Missing parameter(s): customer_file_source" in error_of(response)["message"]

    def test_terms_not_accepted_fails_200_1870090(
        self, graph: Graph, use_scenario: Callable[[str], None]
    ) -> None:
        # Given an account whose Custom Audience terms are not accepted
        use_scenario("terms_not_accepted")
        # When an audience is created
        response = graph("POST", f"/{ACCOUNT}/customaudiences", data=CUSTOM)
        # Then the terms error links to the acceptance page
        error = error_of(response)
        assert (error["code"], error["error_subcode"]) == (200, 1870090)
        assert "customaudiences/tos" in error["error_user_msg"]

    def test_personal_account_fails_200_1870050(
        self, graph: Graph, use_scenario: Callable[[str], None]
    ) -> None:
        # Given only a personal ad account
        use_scenario("personal_account_only")
        # When an audience is created there
        response = graph("POST", "/act_100000000000002/customaudiences", data=CUSTOM)
        # Then a business account is required
        assert (error_of(response)["code"], error_of(response)["error_subcode"]) == (200, 1870050)

    def test_non_tester_of_development_app_gets_permissions_error(
        self, graph: Graph, use_scenario: Callable[[str], None]
    ) -> None:
        # Given an app in development mode and a user without a role on it
        use_scenario("user_not_tester")
        # When the user creates an audience
        response = graph("POST", f"/{ACCOUNT}/customaudiences", data=CUSTOM)
        # Then it is a permissions error that names development mode
        error = error_of(response)
        assert error["code"] == 200
        assert error["error_user_title"] == "App in development mode"

    def test_listing_shows_live_audiences(self, graph: Graph, new_audience: Callable[..., str]) -> None:
        # Given two audiences, one deleted
        kept, deleted = new_audience("Kept"), new_audience("Deleted")
        graph("DELETE", f"/{deleted}")
        # When the account's audiences are listed
        data = graph("GET", f"/{ACCOUNT}/customaudiences?fields=name").get_json()["data"]
        # Then only the live one is there
        assert data == [{"id": kept, "name": "Kept"}]

    def test_listing_filters_on_the_description(self, graph: Graph) -> None:
        # Given two audiences whose descriptions carry different markers
        for marker in ("one", "two"):
            graph(
                "POST",
                f"/{ACCOUNT}/customaudiences",
                data={**CUSTOM, "description": f"Buyers [ref {marker}]"},
            )
        # When the account's audiences are listed with a filter on the description
        query = json.dumps([{"field": "description", "operator": "CONTAIN", "value": "[ref two]"}])
        data = graph(
            "GET", f"/{ACCOUNT}/customaudiences", query_string={"fields": "description", "filtering": query}
        )
        # Then only the matching one is listed
        assert [a["description"] for a in data.get_json()["data"]] == ["Buyers [ref two]"]

    def test_an_unknown_filter_operator_is_refused(self, graph: Graph) -> None:
        query = json.dumps([{"field": "name", "operator": "LIKE", "value": "x"}])
        response = graph("GET", f"/{ACCOUNT}/customaudiences", query_string={"filtering": query})
        assert error_of(response)["code"] == 100


class TestUsers:
    def test_upload_counts_received_and_invalid_entries(
        self, new_audience: Callable[..., str], upload: Upload
    ) -> None:
        # Given an audience and a batch with one value that is not a SHA-256 digest
        audience_id = new_audience()
        rows = [*hashed_emails(3), "buyer@example.com"]
        # When the batch is uploaded
        body = upload(audience_id, rows, session={"session_id": 42, "batch_seq": 1}).get_json()
        # Then all rows were received, one is invalid, and the sample names its row, not its value
        assert body == {
            "audience_id": audience_id,
            "session_id": "42",
            "num_received": 4,
            "num_invalid_entries": 1,
            "invalid_entry_samples": {"3": "EMAIL_SHA256 is not a lowercase SHA-256 hex digest"},
        }

    def test_num_received_accumulates_over_a_session(
        self, new_audience: Callable[..., str], upload: Upload
    ) -> None:
        # Given a session's first batch
        audience_id = new_audience()
        upload(audience_id, hashed_emails(3), session={"session_id": 7, "batch_seq": 1})
        # When its second, last batch arrives
        body = upload(
            audience_id,
            hashed_emails(2, start=3),
            session={"session_id": 7, "batch_seq": 2, "last_batch_flag": True},
        ).get_json()
        # Then num_received counts both batches
        assert body["num_received"] == 5

    def test_retried_batch_adds_nobody_twice(
        self, client: FlaskClient, new_audience: Callable[..., str], upload: Upload
    ) -> None:
        # Given a batch uploaded once
        audience_id = new_audience()
        session = {"session_id": 9, "batch_seq": 1}
        upload(audience_id, hashed_emails(5), session=session)
        # When the same batch is retried
        body = upload(audience_id, hashed_emails(5), session=session).get_json()
        # Then neither the members nor the session count grew
        assert body["num_received"] == 5
        assert members_of(client, audience_id)["count"] == 5

    def test_multi_key_rows_are_stored_as_received(
        self, client: FlaskClient, new_audience: Callable[..., str], upload: Upload
    ) -> None:
        # Given rows with e-mail and first name, the name unknown in one row
        audience_id = new_audience()
        rows = [[sha256("a@example.com"), sha256("ann")], [sha256("b@example.com"), ""]]
        # When they are uploaded with a multi-key schema
        upload(audience_id, rows, schema=["EMAIL", "FN"])
        # Then the admin view shows exactly those rows under that schema
        assert members_of(client, audience_id)["members"] == [
            {"schema": ["EMAIL", "FN"], "rows": sorted(rows)}
        ]

    def test_more_than_10000_rows_fails_105(self, new_audience: Callable[..., str], upload: Upload) -> None:
        # When one request carries 10,001 rows
        response = upload(new_audience(), ["0" * 64] * 10_001)
        # Then it is refused as too many parameters
        assert error_of(response)["code"] == 105

    def test_row_length_must_match_schema(self, new_audience: Callable[..., str], upload: Upload) -> None:
        # When a row has fewer values than the schema has keys
        response = upload(new_audience(), [[sha256("a@example.com")]], schema=["EMAIL", "FN"])
        # Then the request is invalid
        assert error_of(response)["code"] == 100

    def test_delete_removes_members(
        self, client: FlaskClient, new_audience: Callable[..., str], upload: Upload
    ) -> None:
        # Given three members
        audience_id = new_audience()
        upload(audience_id, hashed_emails(3))
        # When one is removed
        upload(audience_id, hashed_emails(1), method="DELETE")
        # Then two remain
        assert members_of(client, audience_id)["count"] == 2

    def test_form_encoded_payload_is_accepted(
        self, client: FlaskClient, graph: Graph, new_audience: Callable[..., str]
    ) -> None:
        # Given the SDK's transport: payload and session as JSON strings in a form body
        audience_id = new_audience()
        form = {
            "payload": json.dumps({"schema": "EMAIL_SHA256", "data": hashed_emails(2)}),
            "session": json.dumps({"session_id": 1, "batch_seq": 1, "last_batch_flag": True}),
        }
        # When it is posted
        response = graph("POST", f"/{audience_id}/users", data=form)
        # Then both rows arrive
        assert response.get_json()["num_received"] == 2
        assert members_of(client, audience_id)["count"] == 2

    def test_upload_to_deleted_audience_fails_1487366(
        self, graph: Graph, new_audience: Callable[..., str], upload: Upload
    ) -> None:
        # Given a deleted audience
        audience_id = new_audience()
        graph("DELETE", f"/{audience_id}")
        # When users are uploaded to it
        response = upload(audience_id, hashed_emails(1))
        # Then the platform says it was deleted
        assert error_of(response)["code"] == 1487366


class TestReplace:
    def test_replace_swaps_members_on_the_last_batch(
        self, client: FlaskClient, new_audience: Callable[..., str], upload: Upload
    ) -> None:
        # Given an audience with three members and a replace session's first batch
        audience_id = new_audience()
        upload(audience_id, hashed_emails(3))
        upload(
            audience_id,
            hashed_emails(1, start=10),
            edge="usersreplace",
            session={"session_id": 5, "batch_seq": 1},
        )
        members_during = members_of(client, audience_id)["count"]
        # When the last batch arrives
        last = {"session_id": 5, "batch_seq": 2, "last_batch_flag": True}
        upload(audience_id, hashed_emails(1, start=11), edge="usersreplace", session=last)
        # Then the old members stayed until the end and were replaced by the session's
        assert members_during == 3
        assert members_of(client, audience_id)["members"][0]["rows"] == sorted(
            [[value] for value in hashed_emails(2, start=10)]
        )

    def test_first_batch_must_be_seq_1(self, new_audience: Callable[..., str], upload: Upload) -> None:
        # When a replace session starts at batch 2
        response = upload(
            new_audience(), hashed_emails(1), edge="usersreplace", session={"session_id": 5, "batch_seq": 2}
        )
        # Then it is an invalid batch for replace
        assert (error_of(response)["code"], error_of(response)["error_subcode"]) == (2650, 1870147)

    def test_second_session_while_one_runs_fails_1870145(
        self, new_audience: Callable[..., str], upload: Upload
    ) -> None:
        # Given a running replace session
        audience_id = new_audience()
        upload(audience_id, hashed_emails(1), edge="usersreplace", session={"session_id": 5, "batch_seq": 1})
        # When another session starts
        response = upload(
            audience_id, hashed_emails(1), edge="usersreplace", session={"session_id": 6, "batch_seq": 1}
        )
        # Then the audience is busy
        assert error_of(response)["error_subcode"] == 1870145

    def test_finished_session_takes_no_more_batches(
        self, new_audience: Callable[..., str], upload: Upload
    ) -> None:
        # Given a finished replace session
        audience_id = new_audience()
        done = {"session_id": 5, "batch_seq": 1, "last_batch_flag": True}
        upload(audience_id, hashed_emails(1), edge="usersreplace", session=done)
        # When it receives another batch
        response = upload(
            audience_id, hashed_emails(1), edge="usersreplace", session={"session_id": 5, "batch_seq": 1}
        )
        # Then the session is finished
        assert error_of(response)["error_subcode"] == 1870159

    def test_session_older_than_90_minutes_times_out(
        self, state: SandboxState, new_audience: Callable[..., str], upload: Upload
    ) -> None:
        # Given a replace session started 91 minutes ago
        audience_id = new_audience()
        upload(audience_id, hashed_emails(1), edge="usersreplace", session={"session_id": 5, "batch_seq": 1})
        state.clock.advance(91 * 60)
        # When its next batch arrives
        response = upload(
            audience_id, hashed_emails(1), edge="usersreplace", session={"session_id": 5, "batch_seq": 2}
        )
        # Then the session timed out
        assert error_of(response)["error_subcode"] == 1870158

    def test_an_abandoned_replace_is_dropped_after_90_minutes_keeping_the_old_members(
        self,
        state: SandboxState,
        client: FlaskClient,
        graph: Graph,
        new_audience: Callable[..., str],
        upload: Upload,
    ) -> None:
        # Given an audience of three members whose replace session started 91 minutes ago and got
        # nothing since
        audience_id = new_audience()
        upload(audience_id, hashed_emails(3))
        upload(audience_id, hashed_emails(1), edge="usersreplace", session={"session_id": 5, "batch_seq": 1})
        during = graph("GET", f"/{audience_id}?fields=operation_status").get_json()["operation_status"]
        state.clock.advance(91 * 60)
        # When the audience is read, then uploaded to
        after = graph("GET", f"/{audience_id}?fields=operation_status").get_json()["operation_status"]
        added = upload(audience_id, hashed_emails(1, start=20))
        # Then the replace ran (414), was dropped as failed (415) with the old members kept, and no
        # longer blocks an upload, which brings the audience back to normal
        assert during["code"] == 414
        assert after["code"] == 415
        assert added.status_code == 200
        assert members_of(client, audience_id)["count"] == 4
        node = graph("GET", f"/{audience_id}?fields=operation_status").get_json()
        assert node["operation_status"]["code"] == 200


class TestLookalikes:
    def test_lookalike_of_a_large_enough_seed_is_created(
        self, graph: Graph, new_audience: Callable[..., str], upload: Upload
    ) -> None:
        # Given a seed with 100 members
        seed = seeded_audience(new_audience, upload)
        # When a 1% lookalike in GB is created
        response = lookalike(graph, seed, ratio=0.01, country="GB")
        # Then it refers back to its seed
        node = graph("GET", f"/{response.get_json()['id']}?fields=subtype,lookalike_spec").get_json()
        assert node["subtype"] == "LOOKALIKE"
        assert node["lookalike_spec"]["origin"] == [{"id": seed, "type": "custom_audience"}]

    def test_seed_under_100_members_is_too_small(
        self, graph: Graph, new_audience: Callable[..., str], upload: Upload
    ) -> None:
        # Given a seed with 99 members
        seed = seeded_audience(new_audience, upload, size=99)
        # When a lookalike is created from it
        response = lookalike(graph, seed, ratio=0.01, country="GB")
        # Then the seed is too small
        error = error_of(response)
        assert error["code"] == 2654
        assert "Source Audience is Too Small" in error["message"]

    def test_duplicate_lookalike_is_refused(
        self, graph: Graph, new_audience: Callable[..., str], upload: Upload
    ) -> None:
        # Given a 2% US lookalike of a seed
        seed = seeded_audience(new_audience, upload)
        lookalike(graph, seed, ratio=0.02, country="US")
        # When the same lookalike is created again
        response = lookalike(graph, seed, ratio=0.02, country="US")
        # Then it is a duplicate
        assert "Duplicate Lookalike" in error_of(response)["message"]

    def test_ratio_above_20_percent_is_invalid(
        self, graph: Graph, new_audience: Callable[..., str], upload: Upload
    ) -> None:
        # When a 25% lookalike is requested
        response = lookalike(graph, seeded_audience(new_audience, upload), ratio=0.25, country="GB")
        # Then the ratio is refused
        assert error_of(response)["code"] == 100

    def test_seed_with_lookalikes_cannot_be_deleted(
        self, graph: Graph, new_audience: Callable[..., str], upload: Upload
    ) -> None:
        # Given a seed with a lookalike
        seed = seeded_audience(new_audience, upload)
        lookalike(graph, seed, ratio=0.01, country="GB")
        # When the seed is deleted
        response = graph("DELETE", f"/{seed}")
        # Then deletion is refused while the lookalike exists
        assert error_of(response)["code"] == 2656


def test_deleted_audience_no_longer_exists(graph: Graph, new_audience: Callable[..., str]) -> None:
    # Given an audience that was deleted
    audience_id = new_audience()
    assert graph("DELETE", f"/{audience_id}").get_json() == {"success": True}
    # When it is read
    response = graph("GET", f"/{audience_id}")
    # Then it does not exist
    assert (error_of(response)["code"], error_of(response)["error_subcode"]) == (100, 33)


DPO_SCHEMA = [
    "EMAIL",
    "DATA_PROCESSING_OPTIONS",
    "DATA_PROCESSING_OPTIONS_COUNTRY",
    "DATA_PROCESSING_OPTIONS_STATE",
]


class TestDataProcessingOptions:
    """Limited Data Use columns as docs/platform-notes.md §3.8 documents them."""

    def test_the_documented_options_are_accepted(
        self, client: FlaskClient, new_audience: Callable[..., str], upload: Upload
    ) -> None:
        # Given rows as the platform's own example: a Californian with LDU, another person without
        audience_id = new_audience()
        rows = [[sha256("a@example.com"), ["LDU"], 1, 1000], [sha256("b@example.com"), [], 0, 0]]
        # When they are uploaded
        response = upload(audience_id, rows, schema=DPO_SCHEMA)
        # Then both are received
        assert response.status_code == 200, response.get_json()
        assert response.get_json()["num_received"] == 2
        assert members_of(client, audience_id)["count"] == 2

    def test_options_other_than_ldu_are_refused(
        self, new_audience: Callable[..., str], upload: Upload
    ) -> None:
        for options in (["LIMITED"], "LDU", ["LDU", "LDU"], None):
            response = upload(new_audience(), [[sha256("a@example.com"), options, 0, 0]], schema=DPO_SCHEMA)
            assert error_of(response)["code"] == 100, options
            assert "DATA_PROCESSING_OPTIONS must be" in error_of(response)["message"]

    def test_a_country_other_than_usa_or_locate_is_refused(
        self, new_audience: Callable[..., str], upload: Upload
    ) -> None:
        for country in (2, "1", True):
            response = upload(
                new_audience(), [[sha256("a@example.com"), ["LDU"], country, 1000]], schema=DPO_SCHEMA
            )
            assert error_of(response)["code"] == 100, country
            assert "DATA_PROCESSING_OPTIONS_COUNTRY must be" in error_of(response)["message"]

    def test_a_country_needs_its_state(self, new_audience: Callable[..., str], upload: Upload) -> None:
        # A row with the country but an empty state, and a schema with the country but no state column
        row_without = upload(new_audience(), [[sha256("a@example.com"), ["LDU"], 1, ""]], schema=DPO_SCHEMA)
        schema_without = upload(
            new_audience(), [[sha256("a@example.com"), ["LDU"], 1]], schema=DPO_SCHEMA[:3]
        )
        for response in (row_without, schema_without):
            assert error_of(response)["code"] == 100
            assert "DATA_PROCESSING_OPTIONS_STATE must be set" in error_of(response)["message"]

    def test_a_state_must_be_a_state_code(self, new_audience: Callable[..., str], upload: Upload) -> None:
        response = upload(new_audience(), [[sha256("a@example.com"), ["LDU"], 1, "CA"]], schema=DPO_SCHEMA)
        assert error_of(response)["code"] == 100
        assert "DATA_PROCESSING_OPTIONS_STATE must be a state code" in error_of(response)["message"]

    def test_country_and_state_need_the_options_column(
        self, new_audience: Callable[..., str], upload: Upload
    ) -> None:
        schema = ["EMAIL", "DATA_PROCESSING_OPTIONS_COUNTRY", "DATA_PROCESSING_OPTIONS_STATE"]
        response = upload(new_audience(), [[sha256("a@example.com"), 1, 1000]], schema=schema)
        assert error_of(response)["code"] == 100
        assert "need DATA_PROCESSING_OPTIONS" in error_of(response)["message"]


VALUE_SCHEMA = ["EMAIL", "LOOKALIKE_VALUE"]


def value_based_audience(graph: Graph) -> str:
    response = graph("POST", f"/{ACCOUNT}/customaudiences", data={**CUSTOM, "is_value_based": "1"})
    assert response.status_code == 200, response.get_json()
    audience_id: str = response.get_json()["id"]
    return audience_id


class TestValueBasedAudiences:
    """Customer-value audiences and their lookalikes as docs/platform-notes.md §4.1 documents them."""

    def test_a_value_based_audience_is_created_and_reads_back_as_such(self, graph: Graph) -> None:
        # When an audience is created with is_value_based=1, as the platform's guide does
        audience_id = value_based_audience(graph)
        # Then it reads back as value-based
        node = graph("GET", f"/{audience_id}?fields=is_value_based,subtype").get_json()
        assert node["is_value_based"] is True
        assert node["subtype"] == "CUSTOM"

    def test_values_are_stored_per_member_as_numbers_or_numeric_strings(
        self, client: FlaskClient, graph: Graph, upload: Upload
    ) -> None:
        # Given a value-based audience
        audience_id = value_based_audience(graph)
        # When the guide's rows are uploaded (integers and floats), and the SDK example's numeric strings
        rows = [[sha256("a@example.com"), 44.5], [sha256("b@example.com"), 140], [sha256("c@example.com"), 0]]
        first = upload(audience_id, rows, schema=VALUE_SCHEMA)
        second = upload(audience_id, [[sha256("d@example.com"), "0.9"]], schema=VALUE_SCHEMA)
        # Then every row is received, and each member keeps its value
        assert first.get_json()["num_invalid_entries"] == 0, first.get_json()
        assert second.get_json()["num_invalid_entries"] == 0
        held = members_of(client, audience_id)
        assert held["is_value_based"] is True
        assert held["members"][0]["schema"] == ["EMAIL"]
        by_member = dict(
            zip((r[0] for r in held["members"][0]["rows"]), held["members"][0]["values"], strict=True)
        )
        assert by_member == {
            sha256("a@example.com"): 44.5,
            sha256("b@example.com"): 140.0,
            sha256("c@example.com"): 0.0,
            sha256("d@example.com"): 0.9,
        }

    def test_a_member_sent_again_takes_its_new_value_and_is_counted_once(
        self, client: FlaskClient, graph: Graph, upload: Upload
    ) -> None:
        audience_id = value_based_audience(graph)
        upload(audience_id, [[sha256("a@example.com"), 10]], schema=VALUE_SCHEMA)
        upload(audience_id, [[sha256("a@example.com"), 25]], schema=VALUE_SCHEMA)
        held = members_of(client, audience_id)
        assert held["count"] == 1
        assert held["members"][0]["values"] == [25.0]

    def test_a_negative_or_non_numeric_value_is_an_invalid_entry(
        self, client: FlaskClient, graph: Graph, upload: Upload
    ) -> None:
        # Given a value-based audience
        audience_id = value_based_audience(graph)
        # When rows carry a negative number, text, a boolean and a negative numeric string
        bad = [[sha256(f"x{i}@example.com"), value] for i, value in enumerate((-1, "ten", True, "-2.5"))]
        response = upload(audience_id, [[sha256("ok@example.com"), 3], *bad], schema=VALUE_SCHEMA)
        # Then those rows are counted invalid (as the platform counts badly formatted rows) and dropped
        body = response.get_json()
        assert (body["num_received"], body["num_invalid_entries"]) == (5, 4)
        assert set(body["invalid_entry_samples"].values()) == {
            "LOOKALIKE_VALUE must be a non-negative number",
            "LOOKALIKE_VALUE is not a number",
        }
        assert members_of(client, audience_id)["count"] == 1

    def test_an_empty_value_is_a_member_without_a_value(
        self, client: FlaskClient, graph: Graph, upload: Upload
    ) -> None:
        audience_id = value_based_audience(graph)
        response = upload(audience_id, [[sha256("a@example.com"), ""]], schema=VALUE_SCHEMA)
        assert response.get_json()["num_invalid_entries"] == 0
        assert members_of(client, audience_id)["members"][0]["values"] == [None]

    def test_a_value_column_is_refused_on_an_audience_that_is_not_value_based(
        self, new_audience: Callable[..., str], upload: Upload
    ) -> None:
        response = upload(new_audience(), [[sha256("a@example.com"), 5]], schema=VALUE_SCHEMA)
        assert response.status_code == 400
        assert error_of(response)["code"] == 100
        assert "value-based custom audience" in error_of(response)["message"]

    def test_adding_to_a_value_based_audience_needs_the_value_column(
        self, graph: Graph, upload: Upload
    ) -> None:
        # Given a value-based audience with a member
        audience_id = value_based_audience(graph)
        upload(audience_id, [[sha256("a@example.com"), 5]], schema=VALUE_SCHEMA)
        # When people are added without LOOKALIKE_VALUE, then the call is refused
        refused = upload(audience_id, [sha256("b@example.com")], schema="EMAIL_SHA256")
        assert error_of(refused)["code"] == 100
        assert "LOOKALIKE_VALUE" in error_of(refused)["message"]
        # But removing people needs no value
        removed = upload(audience_id, [[sha256("a@example.com")]], schema=["EMAIL"], method="DELETE")
        assert removed.status_code == 200, removed.get_json()

    def test_a_replace_carries_the_new_values(
        self, client: FlaskClient, graph: Graph, upload: Upload
    ) -> None:
        audience_id = value_based_audience(graph)
        upload(audience_id, [[sha256("a@example.com"), 5]], schema=VALUE_SCHEMA)
        session = {"session_id": 77, "batch_seq": 1, "last_batch_flag": True}
        replaced = upload(
            audience_id,
            [[sha256("b@example.com"), 7.5]],
            schema=VALUE_SCHEMA,
            edge="usersreplace",
            session=session,
        )
        assert replaced.status_code == 200, replaced.get_json()
        held = members_of(client, audience_id)["members"][0]
        assert (held["rows"], held["values"]) == ([[sha256("b@example.com")]], [7.5])

    def test_a_lookalike_of_a_value_based_seed_with_values_is_created(
        self, graph: Graph, upload: Upload
    ) -> None:
        # Given a value-based seed of 100 members with values
        seed = value_based_audience(graph)
        rows = [[email, float(i)] for i, email in enumerate(hashed_emails(100))]
        assert upload(seed, rows, schema=VALUE_SCHEMA).status_code == 200
        # When a lookalike is made from it as the SDK's example does (type custom_ratio with a ratio)
        response = lookalike(graph, seed, type="custom_ratio", ratio=0.01, country="US")
        # Then it is created from that seed
        assert response.status_code == 200, response.get_json()
        node = graph("GET", f"/{response.get_json()['id']}?fields=origin_audience_id").get_json()
        assert node["origin_audience_id"] == seed

    def test_a_lookalike_of_a_value_based_seed_without_values_is_refused(
        self, graph: Graph, upload: Upload
    ) -> None:
        # Given a value-based seed of 100 members, none with a value
        seed = value_based_audience(graph)
        assert (
            upload(seed, [[email, ""] for email in hashed_emails(100)], schema=VALUE_SCHEMA).status_code
            == 200
        )
        # When a lookalike is made from it
        response = lookalike(graph, seed, ratio=0.01, country="US")
        # Then the platform refuses it: 2654, naming the missing values
        assert response.status_code == 400
        assert error_of(response)["code"] == 2654
        assert "No Customer Values" in error_of(response)["message"]
