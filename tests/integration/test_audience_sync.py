"""Audience sync while connected (issue 12, item 4): a segment audience is re-scored with the current
model on the current data and its members replaced through usersreplace, on its schedule or now; a
stale model is refused unless allowed; disconnecting stops syncing and reconnecting resumes it.

Everything runs through the local stack: the API, the sync state machine executed by moto, the
scoring bundles in moto's S3, and the platform sandbox over HTTP, whose members are compared."""

from __future__ import annotations

import csv
import io
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from local.connected import ConnectedOrg
from local.platform_browser import consent
from local.stack import LocalStack
from shared import wiring
from shared.audiences.preparation import prepare_audience
from shared.records.audiences import AudienceSync
from shared.targeting.models import SegmentSpec
from tests.integration.patience import BACKGROUND_JOB_SECONDS
from tests.integration.test_audiences import body, members
from tests.integration.test_data_source import shop_files, upload_shop, wait_for_sync
from tests.integration.test_wizard import SEGMENT, synced_and_trained

SCHEDULED_EVENT = {"source": "aws.scheduler", "detail-type": "Scheduled Event", "detail": {}}


def segment_audience(api: httpx.Client, org: ConnectedOrg) -> dict[str, Any]:
    created = api.post(
        "/platform-ads/audiences", json={"name": "Likely buyers", "segment": SEGMENT}, headers=org.headers
    )
    assert created.status_code == 201, created.text
    return shown(api, org, created.json()["audienceId"])


def shown(api: httpx.Client, org: ConnectedOrg, audience_id: str) -> dict[str, Any]:
    """The audience as GET /platform-ads/audiences lists it."""
    listed = api.get("/platform-ads/audiences", headers=org.headers).json()["audiences"]
    [audience] = [a for a in listed if a["audienceId"] == audience_id]
    return dict(audience)


def wait_for_last_run(
    api: httpx.Client, org: ConnectedOrg, audience_id: str, after: str | None
) -> dict[str, Any]:
    """Poll the list (as the dashboard does) until a run other than ``after`` has ended."""
    deadline = time.monotonic() + BACKGROUND_JOB_SECONDS
    while time.monotonic() < deadline:
        audience = shown(api, org, audience_id)
        last = audience["sync"]["lastRun"]
        if last is not None and last["runId"] != after and audience["sync"]["current"] is None:
            return audience
        time.sleep(0.3)
    raise AssertionError(f"no sync of {audience_id} ended")


def member_ids(sandbox: httpx.Client, platform_id: str) -> list[str]:
    return [row[0] for row in members(sandbox, platform_id)]


def expected_ids(org: ConnectedOrg, audience_id: str) -> list[str]:
    """The extern ids the segment selects now (the current model's scores, the current customers),
    less the audience's holdout group, which is never uploaded."""
    spec = SegmentSpec.model_validate(SEGMENT)
    chosen = wiring.targeting_service().users_for(org.org_id, spec, latest_identifiers=True)
    record = wiring.audience_store().get(org.org_id, audience_id)
    assert record is not None
    held: set[str] = set()
    if record.holdout is not None:
        groups = csv.DictReader(io.StringIO(wiring.data_blobs().get(record.holdout.groups_key).decode()))
        held = {row["user_id"] for row in groups if row["group"] == "holdout"}
    users = [user for user in chosen.users if user.user_id not in held]
    return sorted(row[0] for row in prepare_audience(users).rows)


def upload_paths(sandbox: httpx.Client) -> list[str]:
    calls = sandbox.get("/requests", params={"method": "POST"}).json()["requests"]
    return [c["path"].rsplit("/", 1)[-1] for c in calls if c["path"].endswith(("/users", "/usersreplace"))]


def resync(api: httpx.Client, org: ConnectedOrg, seed: int) -> str:
    """Sync the shop again with other data, which trains new versions of both models."""
    upload_id = upload_shop(api, org, shop_files(n_users=500, seed=seed))
    started = api.post("/platform-ads/data-source/sync", json={"uploadId": upload_id}, headers=org.headers)
    assert started.status_code == 202, started.text
    source = wait_for_sync(api, org, started.json()["syncId"], trained=True)
    assert source["current"]["training"]["purchase"]["state"] == "succeeded"
    version: str = source["current"]["version"]
    return version


def make_due(org: ConnectedOrg, audience_id: str) -> None:
    """A day passes: the audience's next sync is due."""
    store = wiring.audience_store()
    record = store.get(org.org_id, audience_id)
    assert record is not None
    sync = record.sync or AudienceSync()
    record.sync = sync.model_copy(update={"next_sync_at": datetime.now(UTC) - timedelta(minutes=1)})
    store.put(record)


def run_scheduler(stack: LocalStack) -> dict[str, int]:
    assert stack.gateway is not None
    result: dict[str, int] = stack.gateway.invoke("SyncAudiencesFunction", SCHEDULED_EVENT)
    return result


def test_refresh_now_rescores_with_the_current_model_and_replaces_the_members(
    stack: LocalStack, api: httpx.Client, org: ConnectedOrg, sandbox: httpx.Client
) -> None:
    # Given: a segment audience, then the shop synced again with other data (new model versions)
    synced_and_trained(api, org)
    audience = segment_audience(api, org)
    platform_id = audience["platformCustomAudienceId"]
    before = member_ids(sandbox, platform_id)
    version = resync(api, org, seed=12)
    model = wiring.model_store().get(org.org_id, SEGMENT["modelName"])
    assert model is not None
    assert model.version != audience["segment"]["modelVersion"]
    sandbox.delete("/requests")

    # When: the user presses refresh now (no body)
    started = api.post(f"/platform-ads/audiences/{audience['audienceId']}/refresh", headers=org.headers)

    # Then: accepted, running in the background, and it ends with the new model's segment on the platform
    assert started.status_code == 202, started.text
    assert started.json()["sync"]["current"]["trigger"] == "now"
    synced = wait_for_last_run(api, org, audience["audienceId"], after=None)
    run = synced["sync"]["lastRun"]
    assert run["outcome"] == "succeeded", run
    after = member_ids(sandbox, platform_id)
    assert after == expected_ids(org, audience["audienceId"])
    assert len(set(after)) == len(after)
    assert set(before) - set(after), "the data changed, so some old members must have gone"
    # The sizes and versions are recorded on the run and the audience
    assert run["modelVersion"] == model.version
    assert run["datasetVersion"] == version
    assert run["previousSize"] == len(before) == audience["userCount"]
    assert run["usersUploaded"] == len(after) == synced["userCount"]
    assert run["usersSelected"] == 250
    assert synced["segment"]["modelVersion"] == model.version
    assert synced["segment"]["datasetVersion"] == version
    # Through usersreplace only: nobody was removed and re-added (which would reset the ad sets' learning)
    assert upload_paths(sandbox) == ["usersreplace"]
    node = sandbox.get("/state").json()
    assert any(a["id"] == platform_id and a["member_count"] == len(after) for a in node["audiences"])


def test_a_stale_model_is_refused_unless_the_user_allows_it(
    stack: LocalStack, api: httpx.Client, org: ConnectedOrg, sandbox: httpx.Client
) -> None:
    # Given: a segment audience whose model is now 40 days old
    synced_and_trained(api, org)
    audience = segment_audience(api, org)
    before = member_ids(sandbox, audience["platformCustomAudienceId"])
    store = wiring.model_store()
    model = store.get(org.org_id, SEGMENT["modelName"])
    assert model is not None
    store.put(model.model_copy(update={"trained_at": datetime.now(UTC) - timedelta(days=40)}))
    sandbox.delete("/requests")

    # When: it is refreshed
    api.post(f"/platform-ads/audiences/{audience['audienceId']}/refresh", headers=org.headers)
    refused = wait_for_last_run(api, org, audience["audienceId"], after=None)

    # Then: refused with the reason and the remedy, and the platform's audience is untouched
    run = refused["sync"]["lastRun"]
    assert run["outcome"] == "failed"
    assert run["failure"]["code"] == "model_stale"
    assert "40 days old" in run["failure"]["message"]
    assert "Sync even when the model is stale" in run["failure"]["remedy"]
    assert upload_paths(sandbox) == []
    assert member_ids(sandbox, audience["platformCustomAudienceId"]) == before

    # When: the user allows a stale model for this audience, and refreshes again
    allowed = api.post(
        f"/platform-ads/audiences/{audience['audienceId']}/sync",
        json={"allowStaleModel": True},
        headers=org.headers,
    )
    assert allowed.status_code == 200, allowed.text
    assert allowed.json()["sync"]["allowStaleModel"] is True
    api.post(f"/platform-ads/audiences/{audience['audienceId']}/refresh", headers=org.headers)
    synced = wait_for_last_run(api, org, audience["audienceId"], after=run["runId"])

    # Then: it syncs, and the run says a stale model was used
    assert synced["sync"]["lastRun"]["outcome"] == "succeeded"
    assert synced["sync"]["lastRun"]["staleModelAllowed"] is True
    assert upload_paths(sandbox) == ["usersreplace"]


def test_disconnecting_stops_scheduled_syncs_and_reconnecting_resumes_them(
    stack: LocalStack, api: httpx.Client, org: ConnectedOrg, sandbox: httpx.Client
) -> None:
    # Given: a segment audience whose daily sync is due, and the ad account disconnected
    synced_and_trained(api, org)
    audience = segment_audience(api, org)
    make_due(org, audience["audienceId"])
    assert api.post("/platform-ads/disconnect", headers=org.headers).status_code == 200
    sandbox.delete("/requests")

    # When: the schedule runs
    run_scheduler(stack)

    # Then: nothing syncs; the audience stays as it is on the platform
    waiting = shown(api, org, audience["audienceId"])
    assert waiting["sync"]["current"] is None
    assert waiting["sync"]["lastRun"] is None
    assert upload_paths(sandbox) == []

    # When: the user reconnects, and the schedule runs again
    url = api.post("/platform-ads/connect", headers=org.headers).json()["authorizationUrl"]
    assert consent(url, stack.api_url, org.headers["Authorization"]).status_code == 200
    summary = run_scheduler(stack)

    # Then: the missed sync runs, on the schedule's account
    assert summary["started"] >= 1
    synced = wait_for_last_run(api, org, audience["audienceId"], after=None)
    assert synced["sync"]["lastRun"]["outcome"] == "succeeded"
    assert synced["sync"]["lastRun"]["trigger"] == "schedule"
    assert member_ids(sandbox, audience["platformCustomAudienceId"]) == expected_ids(
        org, audience["audienceId"]
    )
    # and the next one is due a day after this one started
    started_at = datetime.fromisoformat(synced["sync"]["lastRun"]["startedAt"])
    assert datetime.fromisoformat(synced["sync"]["nextSyncAt"]) == started_at + timedelta(days=1)


def test_an_audience_that_is_not_due_is_left_alone(
    stack: LocalStack, api: httpx.Client, org: ConnectedOrg, sandbox: httpx.Client
) -> None:
    # Given: a segment audience made just now (its daily sync is due tomorrow)
    synced_and_trained(api, org)
    audience = segment_audience(api, org)
    assert datetime.fromisoformat(audience["sync"]["nextSyncAt"]) == datetime.fromisoformat(
        audience["createdAt"]
    ) + timedelta(days=1)
    sandbox.delete("/requests")

    # When
    run_scheduler(stack)

    # Then
    assert shown(api, org, audience["audienceId"])["sync"]["current"] is None
    assert upload_paths(sandbox) == []


def test_the_user_sets_and_sees_the_schedule(
    api: httpx.Client, org: ConnectedOrg, sandbox: httpx.Client
) -> None:
    # Given
    synced_and_trained(api, org)
    audience = segment_audience(api, org)
    assert audience["sync"]["frequency"] == "daily"
    created = datetime.fromisoformat(audience["createdAt"])
    path = f"/platform-ads/audiences/{audience['audienceId']}/sync"

    # When / Then: weekly moves the next sync to a week after creation; off has none
    weekly = api.post(path, json={"frequency": "weekly"}, headers=org.headers)
    assert weekly.status_code == 200, weekly.text
    assert weekly.json()["sync"]["frequency"] == "weekly"
    assert datetime.fromisoformat(weekly.json()["sync"]["nextSyncAt"]) == created + timedelta(days=7)
    off = api.post(path, json={"frequency": "off"}, headers=org.headers).json()
    assert off["sync"]["nextSyncAt"] is None
    assert shown(api, org, audience["audienceId"])["sync"]["frequency"] == "off"
    # A bad value names the field
    bad = api.post(path, json={"frequency": "hourly"}, headers=org.headers)
    assert bad.status_code == 400
    assert "frequency" in bad.text


def test_an_audience_made_from_a_list_has_no_segment_to_sync(api: httpx.Client, org: ConnectedOrg) -> None:
    # Given
    listed = api.post("/platform-ads/audiences", json=body(20), headers=org.headers).json()
    path = f"/platform-ads/audiences/{listed['audienceId']}"

    # When
    refreshed = api.post(f"{path}/refresh", json={}, headers=org.headers)
    configured = api.post(f"{path}/sync", json={"frequency": "weekly"}, headers=org.headers)

    # Then: both say why and what to do instead; the list shows no sync
    for response in (refreshed, configured):
        assert response.status_code == 422, response.text
        assert "made from a list" in response.json()["error"]["message"]
        assert "create it in the launch wizard from a model and a rule" in response.json()["error"]["remedy"]
        assert "upload the new list" in response.json()["error"]["remedy"]
    assert shown(api, org, listed["audienceId"])["sync"] is None


def test_a_sync_whose_trainings_fail_replaces_nothing_and_refresh_keeps_the_data_in_force(
    stack: LocalStack, api: httpx.Client, org: ConnectedOrg, sandbox: httpx.Client
) -> None:
    # Given a segment audience, then a sync of three other customers and three orders, on which both
    # trainings fail (too few orders). Walking make dev, those three customers became the data in force
    # anyway, and Refresh now then failed for want of the segment's users ("Widen the segment")
    in_force = synced_and_trained(api, org)
    audience = segment_audience(api, org)
    before = member_ids(sandbox, audience["platformCustomAudienceId"])
    tiny = {
        "customers": b"user_id,email\nx1,x1@example.com\nx2,x2@example.com\nx3,x3@example.com\n",
        "products": b"product_id,name,category,price\nq1,Thing,cat,10\n",
        "orders": b"order_id,user_id,product_id,quantity,amount,timestamp\n"
        b"o1,x1,q1,1,10,2026-11-01T10:00:00Z\no2,x2,q1,1,10,2026-11-02T10:00:00Z\n"
        b"o3,x3,q1,1,10,2026-11-03T10:00:00Z\n",
    }
    started = api.post(
        "/platform-ads/data-source/sync", json={"uploadId": upload_shop(api, org, tiny)}, headers=org.headers
    )
    assert started.status_code == 202, started.text
    source = wait_for_sync(api, org, started.json()["syncId"], trained=True)

    # Then the data synced before is still in force, and the new version is listed with why it is not
    assert source["current"]["version"] == in_force
    newest = source["versions"][0]
    assert newest["version"] == started.json()["syncId"]
    assert newest["training"]["purchase"]["state"] == "failed"
    assert newest["training"]["purchase"]["error"] == "Training needs at least 20 order lines; got 3."
    assert newest["training"]["purchase"]["remedy"]
    # And the Models page's answer says the same: the newest sync's training failed, not in force
    models = api.get("/dashboard/models", headers=org.headers).json()
    assert (models["currentDatasetVersion"], models["newestDatasetVersion"]) == (in_force, newest["version"])
    [purchase] = [m for m in models["models"] if m["name"] == "shop-purchase"]
    assert (purchase["training"]["datasetVersion"], purchase["training"]["inForce"]) == (
        newest["version"],
        False,
    )

    # When the user presses refresh now
    assert api.post(
        f"/platform-ads/audiences/{audience['audienceId']}/refresh", headers=org.headers
    ).is_success

    # Then the run succeeds on the data in force, and the platform keeps the same members
    run = wait_for_last_run(api, org, audience["audienceId"], after=None)["sync"]["lastRun"]
    assert run["outcome"] == "succeeded", run
    after = member_ids(sandbox, audience["platformCustomAudienceId"])
    assert after == expected_ids(org, audience["audienceId"])
    assert set(after) == set(before)
