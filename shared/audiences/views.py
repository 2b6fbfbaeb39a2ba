"""What the service shows of a stored audience: records in, response bodies out."""

from __future__ import annotations

from collections.abc import Sequence

from shared.activation.steps import planned_steps
from shared.audiences.models import (
    ActivationError,
    ActivationProgressView,
    ActivationStatus,
    AdvertObjectView,
    AdvertView,
    AudienceCreated,
    AudienceSyncRunView,
    AudienceSyncView,
    AudienceView,
    HoldoutView,
    LookalikeView,
    PlatformChangeView,
    PlatformObjectView,
    SegmentView,
    ValueSeedView,
)
from shared.audiences.schedule import next_sync_at, sync_of
from shared.records.audiences import AudienceRecord, LookalikeRecord, PublicationRecord, SyncRun


def audience_view(record: AudienceRecord) -> AudienceView:
    """The audience as ``GET /platform-ads/audiences`` lists it, with its upload progress if any."""
    progress = None
    if record.upload is not None:
        progress = {
            "batchesDone": record.upload.batches_done,
            "batchesTotal": record.upload.batches_total,
            "received": record.upload.num_received,
            "invalid": record.upload.num_invalid_entries,
        }
    return AudienceView(
        audience_id=record.audience_id,
        name=record.name,
        status=record.status,
        user_count=record.user_count,
        users_not_sent=int(record.quality.get("dropped_no_identifier", 0)),
        objective=record.objective,
        product_id=record.product_id,
        model_id=record.model_id,
        platform_custom_audience_id=record.platform_custom_audience_id,
        created_at=record.created_at,
        lookalike=lookalike_view(record.lookalike),
        has_snapshot=record.snapshot_key is not None,
        progress=progress,
        failure=record.failure,
        advert=advert_view(record.publication),
        segment=SegmentView.model_validate(record.segment.model_dump()) if record.segment else None,
        holdout=holdout_view(record),
        value_seed=value_seed_view(record),
        activation_url=activation_url(record.audience_id),
        sync=sync_view(record),
        platform_changes=platform_changes_view(record),
    )


def platform_changes_view(record: AudienceRecord) -> list[PlatformChangeView]:
    """What the last drift check or refresh found changed on the platform's side."""
    return [PlatformChangeView.model_validate(change.model_dump()) for change in record.platform_changes]


def sync_view(record: AudienceRecord) -> AudienceSyncView | None:
    """A segment audience's sync settings, next run, current run and last run; None for a list."""
    sync = sync_of(record)
    if sync is None:
        return None
    return AudienceSyncView(
        frequency=sync.frequency,
        allow_stale_model=sync.allow_stale_model,
        next_sync_at=next_sync_at(record),
        current=sync_run_view(sync.current),
        last_run=sync_run_view(sync.last_run),
    )


def sync_run_view(run: SyncRun | None) -> AudienceSyncRunView | None:
    if run is None:
        return None
    progress = None
    if run.replace is not None and run.outcome == "running":
        progress = {"batchesDone": run.replace.batches_done, "batchesTotal": run.replace.batches_total}
    return AudienceSyncRunView(
        run_id=run.run_id,
        trigger=run.trigger,
        outcome=run.outcome,
        started_at=run.started_at,
        finished_at=run.finished_at,
        model_name=run.model_name,
        model_version=run.model_version,
        dataset_version=run.dataset_version,
        stale_model_allowed=run.stale_model_allowed,
        users_selected=run.users_selected,
        users_without_customer_row=run.users_without_customer_row,
        users_uploaded=run.users_uploaded,
        previous_size=run.previous_size,
        progress=progress,
        failure=run.failure,
    )


def holdout_view(record: AudienceRecord) -> HoldoutView | None:
    holdout = record.holdout
    if holdout is None:
        return None
    return HoldoutView(
        percent=holdout.percent,
        seed=str(holdout.seed),
        uploaded_users=holdout.uploaded_users,
        holdout_users=holdout.holdout_users,
        lift_url=f"/platform-ads/audiences/{record.audience_id}/lift",
    )


def value_seed_view(record: AudienceRecord) -> ValueSeedView | None:
    seed = record.value_seed
    if seed is None:
        return None
    return ValueSeedView(source=seed.source, column=seed.column, rows_with_value=seed.rows_with_value)


def activation_url(audience_id: str) -> str:
    return f"/platform-ads/activations/{audience_id}"


def activation_status(record: AudienceRecord) -> ActivationStatus:
    """Where ``record``'s activation stands (``GET /platform-ads/activations/{audienceId}``)."""
    activation = record.activation
    upload = record.upload
    steps = (activation.steps if activation and activation.steps else None) or planned_steps(record)
    step = activation.step if activation else ("done" if record.status == "active" else "queued")
    state = (
        activation.state
        if activation
        else {"active": "succeeded", "failed": "failed", "deleted_on_platform": "succeeded"}.get(
            record.status, "running"
        )
    )
    rows_total = upload.total_rows if upload else (activation.rows_total if activation else 0)
    uploaded = min(rows_total, upload.batches_done * upload.batch_size) if upload else 0
    batches_done, batches_total = (upload.batches_done, upload.batches_total) if upload else (0, 0)
    users_total = record.user_count
    if activation:
        # A list read in chunks counts its users chunk by chunk: those selected so far until the last.
        selection = activation.selection
        users_total = activation.users_total or (selection.rows if selection else 0)
    return ActivationStatus(
        audience_id=record.audience_id,
        name=record.name,
        status=record.status,
        state=state,
        step=step,
        steps=list(steps),
        attempt=activation.attempt if activation else 0,
        execution_name=activation.execution_name if activation else None,
        progress=ActivationProgressView(
            users_total=users_total,
            rows_total=rows_total,
            users_uploaded=uploaded,
            batches_done=batches_done,
            batches_total=batches_total,
            percent=_percent(steps, step, state, batches_done, batches_total),
        ),
        platform_objects=_platform_objects(record),
        waiting_for=activation.wait_reason if activation and state == "waiting" else None,
        waiting_until=activation.waiting_until if activation and state == "waiting" else None,
        ads_manager_url=activation.ads_manager_url if activation else None,
        error=ActivationError(**record.failure.model_dump()) if record.failure else None,
        started_at=activation.started_at if activation else record.created_at,
        updated_at=record.updated_at,
        finished_at=activation.finished_at if activation else None,
    )


def _percent(steps: Sequence[str], step: str, state: str, batches_done: int, batches_total: int) -> int:
    """Each step an equal share, the upload's share filled batch by batch."""
    if state == "succeeded" or step == "done":
        return 100
    if step not in steps:
        return 0
    share = 100 / len(steps)
    done = steps.index(step) * share
    if step == "upload_batches" and batches_total:
        done += share * batches_done / batches_total
    return min(99, int(done))


def _platform_objects(record: AudienceRecord) -> list[PlatformObjectView]:
    found: list[PlatformObjectView] = []
    if record.platform_custom_audience_id:
        found.append(
            PlatformObjectView(
                kind="custom_audience", platform_id=record.platform_custom_audience_id, state="created"
            )
        )
    if record.lookalike is not None and record.lookalike.platform_audience_id:
        found.append(
            PlatformObjectView(
                kind="lookalike", platform_id=record.lookalike.platform_audience_id, state="created"
            )
        )
    if record.publication is not None:
        found.extend(
            PlatformObjectView(kind=o.kind, platform_id=o.platform_id, state=o.state)
            for o in record.publication.objects
            if o.state != "planned"
        )
    return found


def audience_created(record: AudienceRecord, message: str, *, background: bool = False) -> AudienceCreated:
    """The response of docs/service-contract.md §4.3 for ``record``; ``background``: the upload goes
    on in the state machine (answered 202 with where to watch it)."""
    return AudienceCreated(
        activation_url=activation_url(record.audience_id) if background else None,
        success=True,
        audience_id=record.audience_id,
        platform_custom_audience_id=record.platform_custom_audience_id,
        user_count=record.user_count,
        status=record.status,
        message=message,
        quality=record.quality,
        lookalike=lookalike_view(record.lookalike),
        platform_changes=platform_changes_view(record),
    )


def lookalike_view(lookalike: LookalikeRecord | None) -> LookalikeView | None:
    if lookalike is None:
        return None
    return LookalikeView(
        platform_audience_id=lookalike.platform_audience_id,
        size_percent=lookalike.size_percent,
        country=lookalike.country,
        status=lookalike.status,
    )


def advert_view(publication: PublicationRecord | None) -> AdvertView | None:
    if publication is None:
        return None
    creative = next((o.params for o in publication.objects if o.kind == "adcreative"), {})
    spec = creative.get("object_story_spec")
    link_data = spec.get("link_data") if isinstance(spec, dict) else None
    text = link_data if isinstance(link_data, dict) else {}
    return AdvertView(
        state=publication.state,
        objects=[
            AdvertObjectView(kind=o.kind, platform_id=o.platform_id, state=o.state)
            for o in publication.objects
        ],
        failure=publication.failure,
        headline=text.get("name"),
        primary_text=text.get("message"),
    )
