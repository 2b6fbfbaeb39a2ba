"""Account closure through the local stack (issue 9, item 12; docs/service-contract.md §1: "A closed
account's data is deleted").

An organization gets everything a real one has: trained models, API keys with usage, a connection
with its encrypted token, a pending OAuth state, audiences with snapshots (one with an advert on the
platform), a large-list upload, a synced data source with its dataset and the models trained from
it, and stored Idempotency-Key results. It is closed through the API, the state machine runs in moto,
and then every table and every bucket is read whole: nothing of the organization remains, and
another organization set up the same way is untouched.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import httpx
import jwt
import pytest

from local.connected import ConnectedOrg, connected_org
from local.moto_server import AwsRequest
from local.seed import create_user, seed_models
from local.seed import sign_in as jwt_for
from local.stack import LocalStack
from local.uploads import send_upload
from shared import wiring
from tests.integration.patience import BACKGROUND_JOB_SECONDS
from tests.integration.test_sample_events import sample_body
from tests.integration.test_site_events import page_event, post_events, site_key
from tests.integration.test_wizard import synced_and_trained

CLOSURE = "/platform-ads/account/closure"


@dataclass
class Footprint:
    """What an organization made, as the test knows it from the API's answers."""

    org: ConnectedOrg
    name: str
    user_id: str
    api_key: str
    # Another member of the organization: (e-mail, password, user id)
    member: tuple[str, str, str] = ("", "", "")
    audiences: list[dict[str, Any]] = field(default_factory=list)
    object_keys: list[str] = field(default_factory=list)
    idempotency_ids: set[str] = field(default_factory=set)
    # The shop's pages' site keys: the one in force and the one it was rotated from
    site_keys: list[str] = field(default_factory=list)


def user_of(org: ConnectedOrg) -> str:
    token = org.headers["Authorization"].split()[1]
    return str(jwt.decode(token, options={"verify_signature": False})["sub"])


def idempotency_ids(stack: LocalStack) -> set[str]:
    return {item["id"] for item in scan(stack, "IdempotencyTable")}


def scan(stack: LocalStack, logical_id: str) -> list[dict[str, Any]]:
    table = wiring.table(stack.physical[logical_id].ref)
    items: list[dict[str, Any]] = []
    kwargs: dict[str, Any] = {}
    while True:
        page = table.scan(**kwargs)
        items.extend(page["Items"])
        if "LastEvaluatedKey" not in page:
            return items
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def every_object(stack: LocalStack) -> dict[str, set[str]]:
    """Every key of every version and delete marker in the data and artifacts buckets."""
    s3 = stack.client("s3")
    found: dict[str, set[str]] = {}
    for logical_id in ("DataBucket", "ArtifactsBucket"):
        keys: set[str] = set()
        for page in s3.get_paginator("list_object_versions").paginate(Bucket=stack.physical[logical_id].ref):
            keys |= {v["Key"] for v in page.get("Versions", []) + page.get("DeleteMarkers", [])}
        found[logical_id] = keys
    return found


def mentions(item: dict[str, Any], text: str) -> bool:
    return text in json.dumps(item, default=str)


def an_organization_with_everything(stack: LocalStack, api: httpx.Client, *, data_source: bool) -> Footprint:
    org = connected_org(stack, api)
    name = wiring.organization_store().name_of(org.org_id)
    assert name is not None
    # Models (artifacts in the versioned bucket) and a key that predicts with one (usage)
    user, product = seed_models(org.org_id, n_users=300)
    created = api.post("/dashboard/api-keys", json={"label": "shop"}, headers=org.headers)
    assert created.status_code == 201, created.text
    key = created.json()["key"]
    for _ in range(2):
        predicted = api.post(
            "/client/predict/purchase-likelihood",
            json={"input": {"user_id": user, "product_id": product}},
            headers={"X-Service-Api-Key": key},
        )
        assert predicted.status_code == 200, predicted.text
    member_email = f"member-{uuid.uuid4().hex[:8]}@example.com"
    member_id, member_password = create_user(stack, org.org_id, member_email)
    footprint = Footprint(
        org=org,
        name=name,
        user_id=user_of(org),
        api_key=key,
        member=(member_email, member_password, member_id),
    )
    # Audiences with snapshots, made with Idempotency-Keys; the first gets an advert on the platform
    before = idempotency_ids(stack)
    for index in range(2):
        body = {**sample_body("create_audience"), "name": f"closure {index} {uuid.uuid4().hex[:6]}"}
        headers = {**org.headers, "Idempotency-Key": f"key-{uuid.uuid4()}"}
        audience = api.post("/platform-ads/audiences", json=body, headers=headers)
        assert audience.status_code == 201, audience.text
        footprint.audiences.append(audience.json())
    first = footprint.audiences[0]["audienceId"]
    advert = api.post(
        f"/platform-ads/audiences/{first}/advert",
        json={**sample_body("publish_advert"), "dryRun": False},
        headers={**org.headers, "Idempotency-Key": f"key-{uuid.uuid4()}"},
    )
    assert advert.status_code == 201, advert.text
    footprint.audiences[0]["advert"] = advert.json()
    footprint.idempotency_ids = idempotency_ids(stack) - before
    assert len(footprint.idempotency_ids) == 3
    for audience in footprint.audiences:
        record = wiring.audience_store().get(org.org_id, audience["audienceId"])
        assert record is not None
        assert record.snapshot_key
        assert record.source_key
        footprint.object_keys += [record.snapshot_key, record.source_key]
    # A large-list upload, sent through its presigned form
    upload = api.post("/platform-ads/uploads", json={}, headers=org.headers)
    assert upload.status_code == 201, upload.text
    sent = send_upload(upload.json(), b"email\na@example.com\n")
    assert sent.status_code == 204, sent.text
    footprint.object_keys.append(f"uploads/{org.org_id}/{upload.json()['uploadId']}.csv")
    # A data source synced from three files, and both models trained from its dataset
    if data_source:
        version = synced_and_trained(api, org)
        dataset = wiring.dataset_store().get(org.org_id, version)
        assert dataset is not None
        footprint.object_keys += list(dataset.keys.values())
    for model in wiring.model_store().list_for_org(org.org_id):
        footprint.object_keys += [model.bundle_key, model.users_key, model.metadata_key]
    # The shop's pages send events with a site key, rotated once (the old key works a day more)
    first_key = site_key(api, org)["siteKey"]
    rotated = api.post("/platform-ads/events/site/key", headers=org.headers)
    assert rotated.status_code == 200, rotated.text
    footprint.site_keys = [first_key, rotated.json()["siteKey"]]
    for key in footprint.site_keys:
        assert post_events(api, key, [page_event()]).status_code == 200
    # A connection begun and not finished: a pending OAuth state
    assert api.post("/platform-ads/connect", headers=org.headers).status_code == 200
    return footprint


def close(api: httpx.Client, footprint: Footprint, **options: Any) -> httpx.Response:
    return api.post(CLOSURE, json={"confirmName": footprint.name, **options}, headers=footprint.org.headers)


def wait_for_closure(api: httpx.Client, footprint: Footprint, states: set[str]) -> dict[str, Any]:
    """Poll GET /platform-ads/account/closure, as the dashboard does, until the closure is in one of
    ``states``."""
    deadline = time.monotonic() + BACKGROUND_JOB_SECONDS
    while True:
        shown = api.get(CLOSURE, headers=footprint.org.headers)
        assert shown.status_code == 200, shown.text
        closure: dict[str, Any] = shown.json()["closure"]
        if closure["state"] in states or time.monotonic() > deadline:
            return closure
        time.sleep(0.2)


def assert_nothing_remains(stack: LocalStack, gone: Footprint) -> None:
    org_id = gone.org.org_id
    for logical_id in ("MainTable", "UsageTable"):
        left = [item for item in scan(stack, logical_id) if mentions(item, org_id)]
        assert left == [], (logical_id, left)
    # Under the user are only the closure's receipt and the closed marker, naming no organization
    under_user = [item for item in scan(stack, "MainTable") if item["pk"] == f"USER#{gone.user_id}"]
    assert sorted(item["sk"] for item in under_user) == ["CLOSED", "CLOSURE"]
    assert all(item.get("org_id") is None and not mentions(item, gone.name) for item in under_user)
    assert gone.idempotency_ids.isdisjoint(idempotency_ids(stack))
    objects = every_object(stack)
    for bucket, keys in objects.items():
        assert [key for key in keys if org_id in key] == [], bucket
    known = set(gone.object_keys)
    assert known
    assert known.isdisjoint(objects["DataBucket"] | objects["ArtifactsBucket"])


def assert_untouched(stack: LocalStack, api: httpx.Client, kept: Footprint) -> None:
    org_id = kept.org.org_id
    assert wiring.organization_store().org_of(kept.user_id) == org_id
    assert jwt_for(stack, kept.member[0], kept.member[1])  # its members still sign in
    assert kept.idempotency_ids <= idempotency_ids(stack)
    objects = every_object(stack)
    assert set(kept.object_keys) <= objects["DataBucket"] | objects["ArtifactsBucket"]
    listed = api.get("/platform-ads/audiences", headers=kept.org.headers)
    assert {a["audienceId"] for a in listed.json()["audiences"]} == {a["audienceId"] for a in kept.audiences}
    keys = api.get("/dashboard/api-keys", headers=kept.org.headers).json()
    assert len(keys["keys"]) == 1
    assert api.get("/platform-ads/status", headers=kept.org.headers).json()["connected"] is True
    usage = [item for item in scan(stack, "UsageTable") if item["pk"].startswith(f"ORG#{org_id}#")]
    assert usage
    assert int(usage[0]["predictions"]) == 2
    predicted = api.post(
        "/client/predict/purchase-likelihood",
        json={"input": {"user_id": "u000001"}},
        headers={"X-Service-Api-Key": kept.api_key},
    )
    assert predicted.status_code != 401, predicted.text
    # Its shop's pages still send events
    assert post_events(api, kept.site_keys[-1], [page_event()]).status_code == 200


@pytest.fixture(scope="module")
def two_organizations(stack: LocalStack) -> tuple[Footprint, Footprint]:
    with httpx.Client(base_url=stack.api_url, timeout=60) as api:
        closing = an_organization_with_everything(stack, api, data_source=True)
        staying = an_organization_with_everything(stack, api, data_source=False)
    return closing, staying


def platform_audiences(sandbox: httpx.Client) -> dict[str, dict[str, Any]]:
    return {a["id"]: a for a in sandbox.get("/state").json()["audiences"]}


def test_closing_an_account_deletes_everything_it_has_and_nothing_of_another(
    stack: LocalStack,
    api: httpx.Client,
    sandbox: httpx.Client,
    two_organizations: tuple[Footprint, Footprint],
) -> None:
    # Given: two organizations with models, keys, usage, connections, audiences (one with an advert),
    # snapshots, uploads and stored request results; the first also a data source with its dataset
    closing, staying = two_organizations

    # When: the first is closed, its platform audiences included, and the closure runs to its end
    accepted = close(api, closing, deletePlatformAudiences=True)
    assert accepted.status_code == 202, accepted.text
    assert accepted.json()["closure"]["state"] == "running"
    closure = wait_for_closure(api, closing, {"completed", "failed"})

    # Then: it completed, phase by phase, and says what it deleted
    assert closure["state"] == "completed", closure
    assert [p["state"] for p in closure["phases"]] == ["done"] * 7
    deleted = {p["name"]: p["deleted"] for p in closure["phases"]}
    assert deleted["platform"] == 2
    assert deleted["idempotency"] == 3
    assert deleted["access"] >= 3  # the two memberships and the pending OAuth state
    assert deleted["users"] == 2
    assert deleted["objects"] >= len(closing.object_keys)
    # Nothing of the organization is left in any table or bucket (its site keys' lookups included)
    assert_nothing_remains(stack, closing)
    # Its shop's pages, still carrying the snippet, are refused and write nothing back: before, the
    # keys outlived the organization and each page view wrote its event counts again
    for key in closing.site_keys:
        assert post_events(api, key, [page_event()]).status_code == 401
    assert_nothing_remains(stack, closing)
    # Its audiences, their lookalikes and the advert's objects are deleted on the platform
    on_platform = platform_audiences(sandbox)
    for audience in closing.audiences:
        assert on_platform[audience["platformCustomAudienceId"]]["deleted"] is True
    advert_ids = {o["platformId"] for o in closing.audiences[0]["advert"]["objects"]}
    objects = {o["id"]: o for o in sandbox.get("/state").json()["ad_objects"]}
    assert {objects[i]["status"] for i in advert_ids} == {"DELETED"}
    # The person who closed it sees the receipt, and nothing else answers them
    shown = api.get(CLOSURE, headers=closing.org.headers).json()
    assert shown["organizationName"] is None
    assert shown["closure"]["state"] == "completed"
    assert api.get("/platform-ads/audiences", headers=closing.org.headers).status_code == 403
    # A prediction with its key finds nothing (a container that still caches the key record finds
    # no model: 404) and writes nothing back
    predicted = api.post(
        "/client/predict/purchase-likelihood",
        json={"input": {"user_id": "u1"}},
        headers={"X-Service-Api-Key": closing.api_key},
    )
    assert predicted.status_code in (401, 404), predicted.text
    assert_nothing_remains(stack, closing)
    # Both of its users are gone from the user pool: neither can sign in again
    cognito = stack.client("cognito-idp")
    pool_id = stack.physical["UserPool"].ref
    for user_id in (closing.user_id, closing.member[2]):
        with pytest.raises(cognito.exceptions.UserNotFoundException):
            cognito.admin_get_user(UserPoolId=pool_id, Username=user_id)
    # (moto answers UserNotFound; a pool with PreventUserExistenceErrors answers NotAuthorized)
    refused = (cognito.exceptions.UserNotFoundException, cognito.exceptions.NotAuthorizedException)
    with pytest.raises(refused):
        jwt_for(stack, closing.member[0], closing.member[1])
    # A session that outlives the organization is told the account was closed
    lingering = api.get("/platform-ads/audiences", headers=closing.org.headers)
    assert (lingering.status_code, lingering.json()["error"]["code"]) == (403, "account_closed")
    # The other organization is untouched
    assert_untouched(stack, api, staying)
    # And asking to close again is a conflict, not a second deletion
    again = close(api, closing)
    assert again.status_code == 409, again.text


def test_a_closure_interrupted_midway_resumes_where_it_stopped_and_completes(
    stack: LocalStack, api: httpx.Client, sandbox: httpx.Client
) -> None:
    # Given: an organization with two audiences on the platform, the second of which the platform
    # will not delete for now (it keeps failing)
    org = connected_org(stack, api)
    name = wiring.organization_store().name_of(org.org_id)
    assert name is not None
    footprint = Footprint(org=org, name=name, user_id=user_of(org), api_key="")
    for index in range(2):
        body = {**sample_body("create_audience"), "name": f"interrupted {index}"}
        created = api.post("/platform-ads/audiences", json=body, headers=org.headers)
        assert created.status_code == 201, created.text
        footprint.audiences.append(created.json())
        record = wiring.audience_store().get(org.org_id, created.json()["audienceId"])
        assert record is not None
        assert record.snapshot_key
        footprint.object_keys.append(record.snapshot_key)
    footprint.audiences.sort(key=lambda a: a["audienceId"])  # the order the closure deletes them in
    first, second = (a["platformCustomAudienceId"] for a in footprint.audiences)
    sandbox.post(
        "/faults", json={"kind": "transient", "method": "DELETE", "path": f"/{second}$", "count": 50}
    )

    # When: the closure runs into it
    accepted = close(api, footprint, deletePlatformAudiences=True)
    assert accepted.status_code == 202, accepted.text
    stopped = wait_for_closure(api, footprint, {"completed", "failed"})

    # Then: it stopped in the platform phase, having deleted the first audience, and says what to do;
    # the organization's members are already out
    assert stopped["state"] == "failed", stopped
    assert stopped["phase"] == "platform"
    assert {p["name"]: p["deleted"] for p in stopped["phases"]}["platform"] == 1
    assert stopped["error"]
    assert "resume" in stopped["remedy"].lower()
    assert platform_audiences(sandbox)[first]["deleted"] is True
    assert platform_audiences(sandbox)[second]["deleted"] is False
    assert api.get("/platform-ads/audiences", headers=org.headers).status_code == 403

    # When: the platform recovers and the person asks again (the dashboard's Resume)
    sandbox.delete("/faults")
    resumed = close(api, footprint, deletePlatformAudiences=True)
    assert resumed.status_code == 202, resumed.text
    finished = wait_for_closure(api, footprint, {"completed", "failed"})

    # Then: the second attempt went on from the second audience and completed
    assert finished["state"] == "completed", finished
    assert finished["attempt"] == 2
    assert {p["name"]: p["deleted"] for p in finished["phases"]}["platform"] == 2
    assert platform_audiences(sandbox)[second]["deleted"] is True
    assert_nothing_remains(stack, footprint)


def test_a_wrong_confirmation_is_refused_and_deletes_nothing(stack: LocalStack, api: httpx.Client) -> None:
    # Given: an organization
    org = connected_org(stack, api)
    name = wiring.organization_store().name_of(org.org_id)

    # When: closing it is confirmed with another name
    refused = api.post(CLOSURE, json={"confirmName": f"{name} typo"}, headers=org.headers)

    # Then: 400, naming the field, why, and what to type
    assert refused.status_code == 400, refused.text
    error = refused.json()["error"]
    assert error["code"] == "validation_error"
    assert error["field"] == "confirmName"
    assert "not the organization's name" in error["message"]
    assert "nothing was deleted" in error["message"]
    assert f"({name})" in error["remedy"]
    # And nothing was asked for or deleted
    shown = api.get(CLOSURE, headers=org.headers).json()
    assert shown == {"organizationName": name, "closure": None}
    assert api.get("/platform-ads/status", headers=org.headers).json()["connected"] is True


def test_deleting_platform_audiences_needs_a_connected_ad_account(
    stack: LocalStack, api: httpx.Client
) -> None:
    # Given: an organization whose ad account was disconnected
    org = connected_org(stack, api)
    name = wiring.organization_store().name_of(org.org_id)
    assert api.post("/platform-ads/disconnect", headers=org.headers).status_code == 200

    # When: it is closed with its platform audiences
    refused = api.post(
        CLOSURE, json={"confirmName": name, "deletePlatformAudiences": True}, headers=org.headers
    )

    # Then: refused before anything is deleted, with the two ways on
    assert refused.status_code == 422, refused.text
    error = refused.json()["error"]
    assert error["field"] == "deletePlatformAudiences"
    assert "Connect the ad account" in error["remedy"]
    assert api.get(CLOSURE, headers=org.headers).json()["closure"] is None


def test_a_step_whose_process_dies_midway_is_retried_and_goes_on_from_its_saved_progress(
    stack: LocalStack, api: httpx.Client
) -> None:
    # Given: an organization with files under several prefixes, and a closure step whose process
    # is killed (out of memory, say) in the middle of deleting them: its worker dies while S3 lists
    # the second prefix, so no code of the step runs after that call
    org = connected_org(stack, api)
    name = wiring.organization_store().name_of(org.org_id)
    assert name is not None
    footprint = Footprint(org=org, name=name, user_id=user_of(org), api_key="")
    body = {**sample_body("create_audience"), "name": "killed midway"}
    created = api.post("/platform-ads/audiences", json=body, headers=org.headers)
    assert created.status_code == 201, created.text
    record = wiring.audience_store().get(org.org_id, created.json()["audienceId"])
    assert record is not None
    assert record.snapshot_key
    assert record.source_key
    footprint.object_keys += [record.snapshot_key, record.source_key]
    calls: list[str] = []  # the prefixes the closure's steps listed to delete, in order

    def killed_on_the_second_prefix(request: AwsRequest) -> None:
        prefix = request.query.get("prefix", "")
        if request.method != "GET" or "versions" not in request.query or org.org_id not in prefix:
            return
        calls.append(prefix)
        if len(calls) == 2:
            assert stack.runner is not None
            stack.runner.kill_running("AccountClosureStepFunction")

    # When: the account is closed
    with stack.aws_hook(killed_on_the_second_prefix):
        assert close(api, footprint).status_code == 202
        closure = wait_for_closure(api, footprint, {"completed", "failed"})

    # Then: the state machine retried the step, which went on from the prefix it died in (the first
    # one, done before, is looked at again only by the last look for late arrivals)
    assert closure["state"] == "completed", closure
    assert closure["attempt"] == 1
    assert calls[2] == calls[1]
    assert calls[2:].count(calls[0]) == 1
    assert_nothing_remains(stack, footprint)
