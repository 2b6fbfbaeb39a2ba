"""Paths as real clients write them: trailing slashes, unknown objects and methods, and what an
edge answers without ``fields`` (docs/platform-notes.md §2.4, §5)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from platform_sandbox import SandboxState
from tests.unit.sandbox.samples import ACCOUNT, error_of

Graph = Callable[..., TestResponse]


def test_a_node_path_with_a_trailing_slash_is_the_node(graph: Graph) -> None:
    # When the ad account is read as the official SDK writes the path, `/act_<id>/`
    response = graph("GET", f"/{ACCOUNT}/?fields=name")
    # Then it is the account, as without the slash
    assert response.status_code == 200, response.get_json()
    assert response.get_json() == graph("GET", f"/{ACCOUNT}?fields=name").get_json()


def test_an_audience_is_read_renamed_and_deleted_through_trailing_slash_paths(
    graph: Graph, new_audience: Callable[..., str]
) -> None:
    # Given an audience
    audience_id = new_audience("Buyers")
    # When it is renamed, read and deleted at `/<id>/`
    renamed = graph("POST", f"/{audience_id}/", data={"name": "Best buyers"})
    read = graph("GET", f"/{audience_id}/?fields=name")
    deleted = graph("DELETE", f"/{audience_id}/")
    # Then each call reaches the audience
    assert renamed.get_json() == {"success": True}
    assert read.get_json() == {"id": audience_id, "name": "Best buyers"}
    assert deleted.get_json() == {"success": True}


def test_an_edge_path_with_a_trailing_slash_is_the_edge(
    graph: Graph, new_audience: Callable[..., str]
) -> None:
    # Given an audience
    audience_id = new_audience("Buyers")
    # When the account's audiences are listed at `/act_<id>/customaudiences/`
    response = graph("GET", f"/{ACCOUNT}/customaudiences/?fields=name")
    # Then the audience is listed
    assert response.get_json()["data"] == [{"id": audience_id, "name": "Buyers"}]


@pytest.mark.parametrize(
    ("method", "path"),
    [
        pytest.param("GET", "/424242424242", id="unknown-object"),
        pytest.param("GET", "/424242424242/", id="unknown-object-slash"),
        pytest.param("GET", f"/{ACCOUNT}/no_such_edge", id="unknown-edge"),
        pytest.param("PUT", f"/{ACCOUNT}", id="unsupported-method"),
        pytest.param("PATCH", f"/{ACCOUNT}/customaudiences/", id="unsupported-method-slash"),
    ],
)
class TestEveryGraphPathChecksTheTokenFirst:
    def test_no_token_is_asked_for(self, client: FlaskClient, method: str, path: str) -> None:
        # When a path that leads nowhere is called without a token
        response = client.open(f"/v25.0{path}", method=method)
        # Then the answer asks for a token and says nothing of the object
        assert (response.status_code, error_of(response)["code"]) == (400, 104)

    def test_a_bad_token_is_refused(self, client: FlaskClient, method: str, path: str) -> None:
        # When it is called with a made-up token
        response = client.open(f"/v25.0{path}", method=method, headers={"Authorization": "Bearer EAAnot"})
        # Then the token is refused (190), as on every other Graph path
        assert error_of(response)["code"] == 190

    def test_a_valid_token_learns_the_path_leads_nowhere(self, graph: Graph, method: str, path: str) -> None:
        # When it is called with a valid token
        response = graph(method, path)
        # Then the answer is the platform's for that path: an edge the account does not have is an
        # unknown path component (2500); anything else does not exist or does not support the
        # operation (100/33)
        error = error_of(response)
        if path.endswith("/no_such_edge"):
            assert (response.status_code, error["code"], error.get("error_subcode")) == (400, 2500, None)
            assert error["message"] == "Unknown path components: /no_such_edge"
            assert error["type"] == "OAuthException"
        else:
            assert (error["code"], error["error_subcode"]) == (100, 33)


@pytest.mark.parametrize(
    "path",
    [
        pytest.param(f"/{ACCOUNT}/no_such_edge", id="account"),
        pytest.param("/me/no_such_edge", id="me"),
        pytest.param(f"/{ACCOUNT}/no_such_edge/", id="trailing-slash"),
    ],
)
def test_an_edge_an_object_does_not_have_is_an_unknown_path_component(graph: Graph, path: str) -> None:
    # When an object the token can see is asked for an edge it does not have
    response = graph("POST" if path.startswith("/me") else "GET", path)
    # Then the platform names the unknown part of the path (2500, no subcode), as for
    # `GET /me/friendslist`: {"message": "Unknown path components: /friendslist", "code": 2500}
    assert response.status_code == 400
    error = error_of(response)
    assert (error["code"], error.get("error_subcode")) == (2500, None)
    assert error["message"] == "Unknown path components: /no_such_edge"


def test_an_edge_of_an_unknown_object_says_the_object_is_not_there(graph: Graph) -> None:
    # When an edge of an object that does not exist is asked for
    response = graph("GET", "/424242424242/no_such_edge")
    # Then it is the object that does not exist (100/33), named by its id
    error = error_of(response)
    assert (error["code"], error["error_subcode"]) == (100, 33)
    assert "Object with ID '424242424242'" in error["message"]


def test_an_edge_of_an_audience_of_anothers_account_says_the_object_is_not_there(
    graph: Graph, new_audience: Callable[..., str], state: SandboxState
) -> None:
    # Given an audience of an ad account the user then loses their role on
    audience_id = new_audience("Buyers")
    state.world.accounts[ACCOUNT.removeprefix("act_")].roles.clear()
    # When an edge it does not have is asked for
    response = graph("GET", f"/{audience_id}/no_such_edge")
    # Then the answer does not tell it exists (100/33)
    assert (error_of(response)["code"], error_of(response)["error_subcode"]) == (100, 33)


def test_an_unknown_path_still_checks_the_version(client: FlaskClient) -> None:
    # When an unknown path names a retired version
    response = client.get("/v20.0/424242424242", headers={"Authorization": "Bearer EAAnot"})
    # Then the version is refused first (2635), as on known paths
    assert error_of(response)["code"] == 2635


@pytest.mark.parametrize(
    ("path", "node_type"),
    [
        pytest.param("/me/adaccounts", "AdAccount", id="adaccounts"),
        pytest.param(f"/{ACCOUNT}/customaudiences", "CustomAudience", id="customaudiences"),
        pytest.param(f"/{ACCOUNT}/adspixels", "AdsPixel", id="adspixels"),
        pytest.param("/me/accounts", "Page", id="pages"),
        pytest.param("/me/businesses", "Business", id="businesses"),
    ],
)
def test_an_edge_without_fields_answers_ids_only(
    graph: Graph, new_audience: Callable[..., str], path: str, node_type: str
) -> None:
    # Given an account with an audience (and the scenario's pixel, page and business)
    new_audience("Buyers")
    # When the edge is listed without `fields`
    data = graph("GET", path).get_json()["data"]
    # Then every entry is its id alone
    assert data, f"the default scenario has no {node_type}"
    assert all(list(entry) == ["id"] for entry in data), data


def test_an_edge_answers_the_fields_asked_for(graph: Graph) -> None:
    # When the ad accounts are listed with fields
    data = graph("GET", "/me/adaccounts?fields=account_id,name").get_json()["data"]
    # Then each entry has its id and exactly those fields
    assert data
    assert all(set(entry) == {"id", "account_id", "name"} for entry in data)


def test_an_audience_read_without_fields_answers_its_id(
    graph: Graph, new_audience: Callable[..., str]
) -> None:
    # Given an audience
    audience_id = new_audience("Buyers")
    # When it is read without `fields`
    response = graph("GET", f"/{audience_id}")
    # Then only its id comes back (docs/platform-notes.md §2.4)
    assert response.get_json() == {"id": audience_id}


@pytest.mark.parametrize("days", ["0", "181", "soon"])
def test_retention_days_outside_1_to_180_is_refused(graph: Graph, days: str) -> None:
    # When an audience is created keeping its members for an impossible number of days
    response = graph(
        "POST",
        f"/{ACCOUNT}/customaudiences",
        data={
            "name": "Buyers",
            "subtype": "CUSTOM",
            "customer_file_source": "USER_PROVIDED_ONLY",
            "retention_days": days,
        },
    )
    # Then it is the platform's invalid-parameter error (docs/platform-notes.md §2.1)
    assert error_of(response)["code"] == 100


def test_a_renamed_audience_reports_when_it_was_updated(
    graph: Graph, new_audience: Callable[..., str], state: SandboxState
) -> None:
    # Given an audience renamed a minute after it was made
    audience_id = new_audience("Buyers")
    state.clock.advance(60)
    graph("POST", f"/{audience_id}", data={"name": "Best buyers", "retention_days": "90"})
    # When its times and retention are read
    node = graph("GET", f"/{audience_id}?fields=time_created,time_updated,retention_days").get_json()
    # Then the update is a minute after the creation and the retention is the new one
    assert node["time_updated"] - node["time_created"] == 60
    assert node["retention_days"] == 90
