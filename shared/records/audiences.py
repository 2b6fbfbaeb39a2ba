"""The audience as the service keeps it (docs/service-contract.md §2.5): upload progress, lookalike."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

Objective = Literal["retargeting", "prospecting"]
# deleted_on_platform: the platform no longer has it (deleted in its ads manager); the service keeps
# it listed until it is deleted here.
AudienceState = Literal["creating", "uploading", "active", "failed", "deleted_on_platform"]


class LookalikeRecord(BaseModel):
    platform_audience_id: str | None = None
    size_percent: int
    country: str
    # deleted_on_platform: deleted in the platform's ads manager (found by the scheduled drift check)
    status: Literal["pending", "active", "failed", "deleted_on_platform"] = "pending"
    # Saved before the create is sent: without an id, the lookalike may exist (its answer lost) and is
    # looked for by its marker before it is created again.
    create_sent: bool = False


class UploadProgress(BaseModel):
    """Where the upload stands, so a retry resumes after the last acknowledged batch."""

    session_id: int
    total_rows: int
    batch_size: int
    batches_total: int
    batches_done: int = 0
    num_received: int = 0
    num_invalid_entries: int = 0


class FailureRecord(BaseModel):
    """A failure as the user sees it. ``code`` is the service's error code (``shared.errors``), the
    same string a failed activation step reports to Step Functions as its ``errorType``."""

    code: str
    message: str
    remedy: str | None = None
    # The activation step that failed (``ActivationStep``), when it was one.
    step: str | None = None


AdObjectKind = Literal["campaign", "adset", "adcreative", "ad"]
# attempted: the create was sent and its answer lost (it may exist: looked up by name before anything
# else); created: exists on the platform; deleted: removed by a rollback; delete_failed: left on the
# platform and reported (the remedy says to delete it by hand).
AdObjectState = Literal["planned", "attempted", "created", "deleted", "delete_failed"]
# creating -> paused | active; on a failure: rolling_back -> rolled_back | failed (objects left).
# deleted_on_platform: its campaign, ad set or ad was deleted in the platform's ads manager (found by
# the scheduled drift check); deleting the advert in the service removes what is left.
PublicationState = Literal[
    "creating", "paused", "active", "rolling_back", "rolled_back", "failed", "deleted_on_platform"
]


class AdObjectRecord(BaseModel):
    """One object of a published advert: the exact parameters sent, and its platform id once created.

    Parameters naming a parent hold a placeholder (``{campaign}``) until the parent exists."""

    kind: AdObjectKind
    params: dict[str, Any]
    platform_id: str | None = None
    state: AdObjectState = "planned"


class PublicationRecord(BaseModel):
    """Publish advert for an audience: the planned chain, what exists of it, and how it ended."""

    @property
    def on_platform(self) -> list[AdObjectRecord]:
        """The objects that exist (or may: a lost create, a failed deletion) on the platform."""
        return [o for o in self.objects if o.state in ("attempted", "created", "delete_failed")]

    publication_id: str
    state: PublicationState
    ad_account_id: str
    activate: bool
    objects: list[AdObjectRecord]
    destination_link: str
    currency: str
    idempotency_key: str | None = None
    # What the plan found the platform may still refuse (no payment method, no beneficiary known).
    warnings: list[str] = Field(default_factory=list)
    failure: FailureRecord | None = None
    started_at: datetime
    updated_at: datetime


PlatformObjectKind = Literal[
    "audience", "lookalike", "campaign", "adset", "adcreative", "ad", "pixel", "page"
]


class PlatformChange(BaseModel):
    """Something changed on the platform's side (by the marketer in its ads manager, or an admin in
    the business settings) that the service did not do: found by the scheduled drift check or a
    refresh, shown with the audience, never written back over (the platform's value is the truth)."""

    kind: PlatformObjectKind
    platform_id: str
    # name, status, daily_budget, lifetime_budget; "access" for a pixel or Page the token no longer sees.
    field: str
    # What the service set (or last knew); None when it set nothing.
    service_value: str | None = None
    # What the platform has now; None when the token can no longer see the object.
    platform_value: str | None = None
    message: str
    remedy: str | None = None
    seen_at: datetime


class SegmentProvenance(BaseModel):
    """What an audience built from a predictive segment was built from."""

    model_name: str
    model_version: str
    dataset_version: str
    product_id: str
    rule: str
    value: float
    users_selected: int
    users_without_customer_row: int
    # New buyers only: the users who had bought the product were left out before the rule.
    exclude_purchased: bool = False


class HoldoutRecord(BaseModel):
    """The share of a segment audience kept out of the upload (``shared.audiences.holdout``): the
    seed that reproduces the split, the group sizes, and the stored groups (CSV: user_id, score,
    group) that a lift report reads."""

    percent: float
    seed: int
    uploaded_users: int
    holdout_users: int
    groups_key: str


class ValueSeedRecord(BaseModel):
    """A value-based seed (docs/platform-notes.md §4.1): where each customer's value comes from, and how
    many of the uploaded rows carried one."""

    # predicted_spend: the segment's purchase probability x the customer's average order value
    # (``shared.targeting.values``); column: a column of the uploaded list.
    source: Literal["predicted_spend", "column"]
    column: str | None = None
    rows_with_value: int = 0


# The activation pipeline's steps, in order; each is one state of statemachine/activation.asl.json.
ActivationStep = Literal[
    "queued",
    "select_users",
    "normalise_and_hash",
    "create_custom_audience",
    "upload_batches",
    "wait_for_seed",
    "create_lookalike",
    "publish_advert",
    "generate_campaign",
    "mark_active",
    "done",
]
# running: a step is working; waiting: a Wait state (throttled, seed processing, another worker);
# succeeded / failed: the attempt ended.
ActivationState = Literal["running", "waiting", "succeeded", "failed"]


class WorkerLease(BaseModel):
    """Who may advance the audience until when (conditional writes claim it): an execution's name,
    or a synchronous request's id. Only the holder writes the audience's progress."""

    owner: str
    until: datetime


class HashingProgress(BaseModel):
    """NormaliseAndHash over the parts of the users file, one part a task: the upload session and
    where its batches go (chosen by the first part), how many parts are done, and what the done parts
    gave: rows and batches (the next part's batches are numbered after them), the quality report's
    counts (``activation_report`` rows: key, reason, users) and the rows with a customer value."""

    session_id: int
    batch_keys_prefix: str
    parts_done: int = 0
    rows: int = 0
    batches: int = 0
    counts: list[tuple[str, str | None, int]] = Field(default_factory=list)
    with_value: int = 0


class SelectionProgress(BaseModel):
    """SelectUsers over a large uploaded list, one chunk of whole records a task
    (``shared.activation.list_chunks``): where the next chunk starts, where the data starts (after the
    header, which every chunk is read with), the chunks done and the users and line breaks they held
    (later chunks number their users and lines on from them), the parts the users are split into
    (chosen by the first chunk), the countries seen, and the snapshot's multipart upload: its id, the
    parts' ETags, and the chunk whose snapshot lines (with those before) wait, too short for a part
    (``carry``; None: none wait)."""

    offset: int
    data_start: int
    size: int
    chunks_done: int = 0
    rows: int = 0
    lines: int = 0
    parts: int = 1
    countries: list[str] = Field(default_factory=list)
    snapshot_upload: str | None = None
    snapshot_etags: list[str] = Field(default_factory=list)
    carry: int | None = None


class ActivationRecord(BaseModel):
    """One audience's activation: the attempt in progress, where it stands, and what it was asked
    to do after the audience exists (publish an advert, or generate the campaign link)."""

    attempt: int = 1
    execution_name: str | None = None
    state: ActivationState = "running"
    step: ActivationStep = "queued"
    steps: list[ActivationStep] = Field(default_factory=list)
    users_total: int = 0
    # The selected users (CSV) and the stored batches of hashed rows (``<prefix>/<batch_seq>.json``).
    # A list of more users than one NormaliseAndHash task hashes is also stored split by a hash of
    # user_id into ``users_parts`` Parquet files (``shared.activation.steps.users_part_key``), hashed one
    # part a task; 0: the CSV is hashed whole.
    users_key: str | None = None
    users_parts: int = 0
    # A list read in chunks (``selection``) has one Parquet file per part and chunk
    # (``users_chunk_part_key``); 0: one file per part.
    users_chunks: int = 0
    selection: SelectionProgress | None = None
    hashing: HashingProgress | None = None
    # The distinct countries of the selected users as written (trimmed, upper-cased): where an advert
    # for them delivers unless told otherwise.
    countries: list[str] | None = None
    rows_total: int = 0
    batch_keys_prefix: str | None = None
    # The stored rows' columns (None: identifiers.SCHEMA); longer when the users carry Limited Data
    # Use flags (the data processing options, docs/platform-notes.md §3.8).
    upload_schema: list[str] | None = None
    wait_reason: str | None = None
    waiting_until: datetime | None = None
    publish: dict[str, Any] | None = None
    generate_campaign: bool = False
    ads_manager_url: str | None = None
    started_at: datetime
    updated_at: datetime
    finished_at: datetime | None = None


class RecoveryRecord(BaseModel):
    """The stranded-upload sweeper's work on an audience left ``creating``/``uploading`` by a worker that
    stopped (a synchronous create killed at its timeout): each resume it started, and why."""

    attempts: int = 0
    last_attempt_at: datetime
    reason: str


SyncFrequency = Literal["daily", "weekly", "off"]
SyncOutcome = Literal["running", "succeeded", "failed", "stopped"]


class SyncRun(BaseModel):
    """One sync of a segment audience: re-scored, then its members replaced (``usersreplace``).

    While it runs it also holds the replace session's progress, so a step that stops (throttling, a
    lost worker) continues the same session after the last acknowledged batch."""

    run_id: str
    trigger: Literal["schedule", "now"]
    outcome: SyncOutcome = "running"
    started_at: datetime
    finished_at: datetime | None = None
    model_name: str | None = None
    model_version: str | None = None
    dataset_version: str | None = None
    stale_model_allowed: bool = False
    users_selected: int = 0
    users_without_customer_row: int = 0
    users_uploaded: int = 0
    previous_size: int = 0
    # The replace session (docs/platform-notes.md §3.6) and the pending members' stored source.
    replace: UploadProgress | None = None
    replace_started_at: datetime | None = None
    source_key: str | None = None
    failure: FailureRecord | None = None


class AudienceSync(BaseModel):
    """How a segment audience stays up to date while the ad account is connected
    (docs/service-contract.md §3: disconnecting stops syncing)."""

    frequency: SyncFrequency = "daily"
    allow_stale_model: bool = False
    # When the next scheduled sync is due (None: a day or week after creation, by ``frequency``).
    next_sync_at: datetime | None = None
    current: SyncRun | None = None
    last_run: SyncRun | None = None


class AudienceRecord(BaseModel):
    org_id: str
    audience_id: str
    name: str
    product_id: str | None = None
    model_id: str | None = None
    objective: Objective
    daily_budget: float | None = None
    status: AudienceState
    ad_account_id: str
    platform_custom_audience_id: str | None = None
    # Saved before the create is sent: without an id, the platform audience may exist (its answer
    # lost) and is looked for by its marker (``platform_marker``) before it is created again.
    platform_create_sent: bool = False
    user_count: int = 0
    quality: dict[str, Any] = Field(default_factory=dict)
    upload: UploadProgress | None = None
    lookalike: LookalikeRecord | None = None
    # None for audiences created before snapshots existed.
    snapshot_key: str | None = None
    source_key: str | None = None
    idempotency_key: str | None = None
    created_at: datetime
    updated_at: datetime
    failure: FailureRecord | None = None
    publication: PublicationRecord | None = None
    # Set when the users came from a segment (model, product, rule) instead of a list.
    segment: SegmentProvenance | None = None
    # Set when a segment audience kept a holdout out of its upload (issue 15).
    holdout: HoldoutRecord | None = None
    # Set when the seed is value-based: created with is_value_based, every row with its value (issue 15).
    value_seed: ValueSeedRecord | None = None
    # The hash of the request that made it (``shared.audiences.requests.request_digest``): a reused
    # Idempotency-Key with another body is refused on every route.
    request_sha256: str | None = None
    activation: ActivationRecord | None = None
    lease: WorkerLease | None = None
    recovery: RecoveryRecord | None = None
    # Segment audiences only; None means the defaults (daily, stale models refused, never synced).
    sync: AudienceSync | None = None
    # When a refresh with a list of users claimed the members' replace (cleared when it ends; one
    # older than a replace session is lost): no sync starts meanwhile, nor another such refresh.
    refresh_started_at: datetime | None = None
    # What the platform has now that differs from what the service made (the last drift check's or
    # refresh's finding; empty: nothing differs, or never checked).
    platform_changes: list[PlatformChange] = Field(default_factory=list)
    # Incremented by every write of the record (``shared.repositories.audiences``): a writer stores its
    # change only if the revision is still the one it read. Records written before it have none (0).
    revision: int = 0
