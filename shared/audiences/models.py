"""The audience routes' request and response bodies (docs/service-contract.md §4.3-§4.7).

Fields are snake_case in Python and camelCase on the wire (``CamelModel``). ``AudienceSyncProgress`` is
the one exception: the audience sync state machine reads it, in the snake_case of its own events.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field, model_validator

from shared.audiences.holdout import DEFAULT_HOLDOUT_PERCENT, MAX_HOLDOUT_PERCENT
from shared.audiences.identifiers import AudienceUser
from shared.publishing.models import PublishAdvertRequest
from shared.records.audiences import FailureRecord
from shared.targeting.models import HoldoutSeed, SegmentSpec
from shared.wire_models import CamelModel, documented_rules, has, when

# One minor unit of most currencies, and more than any shop spends in a day.
MIN_DAILY_BUDGET = 0.01
MAX_DAILY_BUDGET = 1_000_000_000

_NONE = {"type": "null"}
_NO_USERS = {"maxItems": 0}
# CreateAudienceRequest's validators, as JSON Schema (README, "Audiences"): the users come from one
# place; prospecting names its lookalike; a value-based seed is a prospecting one, from an uploaded
# list with its value column or from a segment (whose values are predicted).
CREATE_AUDIENCE_RULES = (
    {
        "oneOf": [
            {
                **has(users={"minItems": 1}),
                "properties": {"users": {"minItems": 1}, "uploadId": _NONE, "segment": _NONE},
            },
            {
                **has(uploadId={"type": "string"}),
                "properties": {"uploadId": {"type": "string"}, "users": _NO_USERS, "segment": _NONE},
            },
            {
                **has(segment={"type": "object"}),
                "properties": {"segment": {"type": "object"}, "users": _NO_USERS, "uploadId": _NONE},
            },
        ]
    },
    when(
        has(objective={"const": "prospecting"}),
        has(lookalikeSize={"type": "integer"}, lookalikeCountry={"type": "string"}),
    ),
    when(has(valueColumn={"type": "string"}), has(valueBased={"const": True})),
    when(
        has(valueBased={"const": True}),
        {
            **has(objective={"const": "prospecting"}),
            "properties": {"objective": {"const": "prospecting"}, "users": _NO_USERS},
        },
    ),
    when(has(valueBased={"const": True}, uploadId={"type": "string"}), has(valueColumn={"type": "string"})),
    when(has(segment={"type": "object"}), {"properties": {"valueColumn": _NONE}}),
)


class CreateAudienceRequest(CamelModel):
    """``POST /platform-ads/audiences`` (docs/service-contract.md §4.3), plus the wizard's prospecting
    settings (docs/service-contract.md §4.7)."""

    model_config = documented_rules(
        *CREATE_AUDIENCE_RULES,
        examples=[
            {
                "name": "Likely buyers",
                "users": [
                    {"user_id": "u-1001", "email": "ada@example.com", "country": "GB"},
                    {"user_id": "u-1002", "phone": "+44 7700 900123", "country": "GB"},
                ],
            }
        ],
    )

    name: str = Field(min_length=1, max_length=200)
    product_id: str | None = Field(default=None, max_length=200)
    users: list[AudienceUser] = Field(
        default_factory=list,
        description="Users to upload (docs/service-contract.md §2.4); or give uploadId for a large list.",
    )
    upload_id: str | None = Field(
        default=None, description="An uploaded CSV (POST /platform-ads/uploads) instead of users."
    )
    segment: SegmentSpec | None = Field(
        default=None,
        description="A predictive segment instead of users: the users a model's scores for a product keep "
        "(top_n, top_percent or threshold), with their identifiers from the synced data source.",
    )
    holdout_percent: float = Field(
        default=DEFAULT_HOLDOUT_PERCENT,
        ge=0,
        le=MAX_HOLDOUT_PERCENT,
        allow_inf_nan=False,
        description="Segment audiences: the share of the segment (percent, stratified by score) kept out "
        "of the upload as a holdout, so a lift report can compare buyers with and without the ads. 0 "
        "turns it off. Lists of users (users, uploadId) have no holdout.",
    )
    holdout_seed: HoldoutSeed | None = Field(
        default=None,
        description="Segment audiences: the seed of the holdout's random split (recorded with the "
        "audience), as a number or a string of digits (the targeting preview's holdout.seed, so the "
        "activation uploads exactly the users it counted); omit it for a fresh one.",
    )
    objective: Literal["retargeting", "prospecting"] = "retargeting"
    model_id: str | None = Field(default=None, max_length=200)
    # Bounded as a budget, not just as a number: DynamoDB stores numbers between 1e-130 and 1e126
    # only, and 5e-324 (a positive float the fuzzer sent) was a 500 when the record was written.
    daily_budget: float | None = Field(
        default=None,
        ge=MIN_DAILY_BUDGET,
        le=MAX_DAILY_BUDGET,
        allow_inf_nan=False,
        description="Daily budget in the ad account's currency, from 0.01 to 1,000,000,000.",
    )
    lookalike_size: Literal[1, 2, 5] | None = Field(
        default=None, description="Prospecting: lookalike size in percent."
    )
    lookalike_country: Literal["GB", "US", "CA", "AU"] | None = None
    value_based: bool = Field(
        default=False,
        description="Prospecting: make the seed a value-based (customer value) audience, every row with the "
        "customer's value, so the lookalike looks like the most valuable customers "
        "(docs/platform-notes.md §4.1). A segment's value is predicted: its purchase probability x the "
        "customer's average order value; an uploaded list takes its valueColumn.",
    )
    value_column: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description="valueBased with an uploaded list (uploadId): the CSV column holding each customer's "
        "value, a number of at least 0 (blank: no value for that customer).",
    )
    country: str | None = Field(
        default=None,
        pattern="^[A-Za-z]{2}$",
        description="The store's country (ISO alpha-2): gives national phone numbers their country code.",
    )

    @model_validator(mode="after")
    def _users_from_one_place(self) -> CreateAudienceRequest:
        given = sum((bool(self.users), self.upload_id is not None, self.segment is not None))
        if given == 0:
            raise ValueError("users: send at least one user, an uploadId or a segment")
        if given > 1:
            raise ValueError("users: send one of users, an uploadId or a segment, not several")
        return self

    @model_validator(mode="after")
    def _prospecting_needs_a_lookalike(self) -> CreateAudienceRequest:
        if self.objective == "prospecting":
            if self.lookalike_size is None:
                raise ValueError("lookalikeSize is required for prospecting (1, 2 or 5)")
            if self.lookalike_country is None:
                raise ValueError("lookalikeCountry is required for prospecting (GB, US, CA or AU)")
        return self

    @model_validator(mode="after")
    def _values_have_a_source(self) -> CreateAudienceRequest:
        if self.value_column is not None and not self.value_based:
            raise ValueError("valueColumn: only used with valueBased true; set valueBased or leave it out")
        if not self.value_based:
            return self
        if self.objective != "prospecting":
            raise ValueError(
                "valueBased: a value-based seed is for a prospecting lookalike; set objective to "
                "prospecting, or leave valueBased out"
            )
        if self.users:
            raise ValueError(
                "valueBased: a list of users carries no values; upload it as a CSV with a value column "
                "(uploadId and valueColumn), or use a segment, whose values are predicted"
            )
        if self.upload_id is not None and self.value_column is None:
            raise ValueError(
                "valueColumn: name the uploaded CSV's column that holds each customer's value (a number "
                "of at least 0)"
            )
        if self.segment is not None and self.value_column is not None:
            raise ValueError(
                "valueColumn: a segment's values are predicted (purchase probability x the customer's "
                "average order value) and the synced customers file has no value column; leave valueColumn "
                "out, or upload the list with your own values (uploadId)"
            )
        return self


class ActivationRequest(CreateAudienceRequest):
    """``POST /platform-ads/activations``: the audience, and what to make of it once it is live."""

    model_config = documented_rules(
        *CREATE_AUDIENCE_RULES,
        # Publish advert or Generate campaign, not both; and for real, not a dry run.
        when(
            has(publish={"type": "object"}),
            {
                "properties": {
                    "generateCampaign": {"const": False},
                    "publish": {"properties": {"dryRun": {"const": False}}},
                }
            },
        ),
    )

    publish: PublishAdvertRequest | None = Field(
        default=None,
        description="Publish advert once the audience (and lookalike) exists: the same settings as "
        "POST /platform-ads/audiences/{audienceId}/advert.",
    )
    generate_campaign: bool = Field(
        default=False,
        description="Generate campaign: record an ads manager link with the audience selected (creates "
        "nothing on the platform).",
    )

    @model_validator(mode="after")
    def _one_follow_up(self) -> ActivationRequest:
        if self.publish is not None and self.generate_campaign:
            raise ValueError("publish: ask for Publish advert or Generate campaign, not both")
        if self.publish is not None and self.publish.dry_run:
            raise ValueError("publish.dryRun: an activation publishes for real; dry-run the advert first")
        return self


class RefreshAudienceRequest(CamelModel):
    """Replace an audience's members with a new list (the platform's ``usersreplace``); without users,
    a segment audience is synced now (re-scored, then replaced) in the background."""

    users: list[AudienceUser] = Field(
        default_factory=list,
        description="The new members. Leave out (or send no body) to sync a segment audience now; an "
        "empty list is refused (400 on users).",
    )
    country: str | None = Field(default=None, pattern="^[A-Za-z]{2}$")

    def replaces_members(self) -> bool:
        """Whether the request sends ``users`` (a replace of the members, even with an empty list,
        which the replace refuses) rather than leaving them out (a segment audience synced now)."""
        return "users" in self.model_fields_set


class AudienceSyncRequest(CamelModel):
    """``POST /platform-ads/audiences/{audienceId}/sync``: how a segment audience stays up to date."""

    model_config = documented_rules(
        {"anyOf": [has(frequency={"type": "string"}), has(allowStaleModel={"type": "boolean"})]}
    )

    frequency: Literal["daily", "weekly", "off"] | None = Field(
        default=None, description="How often it is re-scored and its members replaced (default daily)."
    )
    allow_stale_model: bool | None = Field(
        default=None,
        description="Sync even when the model is stale (older than the stale threshold); refused otherwise.",
    )

    @model_validator(mode="after")
    def _changes_something(self) -> AudienceSyncRequest:
        if self.frequency is None and self.allow_stale_model is None:
            raise ValueError("frequency: send frequency, allowStaleModel or both")
        return self


class AudienceSyncRunView(CamelModel):
    """One sync: how it ended, the model and data it used, and the sizes before and after."""

    run_id: str
    trigger: str = Field(description="schedule, or now (refresh now).")
    outcome: str = Field(description="running, succeeded, failed, or stopped (the account was disconnected).")
    started_at: datetime
    finished_at: datetime | None
    model_name: str | None
    model_version: str | None
    dataset_version: str | None
    stale_model_allowed: bool
    users_selected: int = Field(description="Users the segment kept from the new scores.")
    users_without_customer_row: int
    users_uploaded: int = Field(description="Members sent to replace the old ones (usable identifiers).")
    previous_size: int = Field(description="Members before the sync.")
    progress: dict[str, int] | None = Field(default=None, description="The replace's batches, while running.")
    failure: FailureRecord | None = None


class AudienceSyncView(CamelModel):
    """A segment audience's sync: settings, when it next runs, the run in progress and the last one."""

    frequency: str
    allow_stale_model: bool
    next_sync_at: datetime | None = Field(description="None when syncing is off.")
    current: AudienceSyncRunView | None
    last_run: AudienceSyncRunView | None


class AudienceSyncProgress(BaseModel):
    """What one audience sync step achieved; the sync state machine branches on it."""

    status: Literal["replacing", "waiting", "done"]
    wait_seconds: int = 0
    batches_done: int = 0
    batches_total: int = 0


class LookalikeView(CamelModel):
    platform_audience_id: str | None
    size_percent: int
    country: str
    status: str


class PlatformChangeView(CamelModel):
    """Something that differs on the platform from what the service made, changed there (in the ads
    manager or the business settings): the service shows it and never changes it back."""

    kind: str = Field(description="audience, lookalike, campaign, adset, ad, pixel or page.")
    platform_id: str
    field: str = Field(description="name, status, daily_budget, lifetime_budget, or access (no longer seen).")
    service_value: str | None = Field(description="What the service set; null when it set nothing.")
    platform_value: str | None = Field(description="What the platform has now; null when it cannot be seen.")
    message: str
    remedy: str | None = None
    seen_at: datetime


class AdvertObjectView(CamelModel):
    kind: str
    platform_id: str | None
    state: str


class AdvertView(CamelModel):
    """Publish advert's objects on the platform: ids, and which a failed rollback left behind."""

    state: str
    objects: list[AdvertObjectView]
    failure: FailureRecord | None = None
    headline: str | None = Field(default=None, description="The advert's headline, as published.")
    primary_text: str | None = Field(default=None, description="The advert's primary text, as published.")


class SegmentView(CamelModel):
    """What a segment audience was built from."""

    model_name: str
    model_version: str
    dataset_version: str
    product_id: str
    rule: str
    value: float
    users_selected: int
    users_without_customer_row: int


class HoldoutView(CamelModel):
    """The segment's users kept out of the upload: share, seed and group sizes."""

    percent: float
    seed: str = Field(
        description="Reproduces the split from the same users and scores. A string of digits: it can "
        "exceed 2^53, past which JavaScript numbers round."
    )
    uploaded_users: int
    holdout_users: int
    lift_url: str = Field(description="The lift report: GET this path.")


class ValueSeedView(CamelModel):
    """A value-based seed (valueBased): the values' source and how many uploaded rows carried one."""

    source: str = Field(
        description="predicted_spend (purchase probability x average order value) or column (valueColumn)."
    )
    column: str | None = None
    rows_with_value: int = Field(description="Uploaded rows with a value (set once the rows are prepared).")


class ActivationProgressView(CamelModel):
    """Upload progress: users and batches (what the progress bar fills)."""

    users_total: int = Field(
        description="Users selected for the audience (before normalising); while a large list is read "
        "in chunks, those selected so far."
    )
    rows_total: int = Field(description="Users with a usable identifier, to upload.")
    users_uploaded: int = Field(description="Users in batches the platform acknowledged.")
    batches_done: int
    batches_total: int
    percent: int = Field(description="How far the whole activation is, 0-100 (steps and batches).")


class PlatformObjectView(CamelModel):
    """An object the activation made on the platform."""

    kind: str = Field(description="custom_audience, lookalike, campaign, adset, adcreative or ad.")
    platform_id: str | None
    state: str


class ActivationError(CamelModel):
    code: str
    message: str
    remedy: str | None = None
    step: str | None = None


class ActivationStatus(CamelModel):
    """``GET /platform-ads/activations/{audienceId}``: where an audience's activation stands.

    The field names are stable (the dashboard's progress bar reads them; README, "Activation status")."""

    audience_id: str
    name: str
    status: str = Field(
        description="The audience: creating, uploading, active, failed or deleted_on_platform."
    )
    state: str = Field(description="The attempt: running, waiting, succeeded or failed.")
    step: str = Field(description="The current (or last) step: one of steps, queued or done.")
    steps: list[str] = Field(description="This activation's steps in order.")
    attempt: int
    execution_name: str | None
    progress: ActivationProgressView
    platform_objects: list[PlatformObjectView]
    waiting_for: str | None = Field(
        default=None, description="While state is waiting: throttled, seed_processing or worker_busy."
    )
    waiting_until: datetime | None = None
    ads_manager_url: str | None = Field(default=None, description="Generate campaign's link.")
    error: ActivationError | None = Field(default=None, description="Why it failed, and what to do.")
    started_at: datetime | None
    updated_at: datetime
    finished_at: datetime | None = None


class AudienceView(CamelModel):
    """What the service shows of an audience."""

    audience_id: str
    name: str
    status: str
    user_count: int = Field(description="The users sent to the platform by the audience's last upload.")
    users_not_sent: int = Field(
        default=0,
        description="Users chosen for the audience that its last upload could not send: no usable e-mail "
        "address or phone number (not in userCount; a holdout's uploaded group still counts them).",
    )
    objective: str
    product_id: str | None
    model_id: str | None
    platform_custom_audience_id: str | None
    created_at: datetime
    lookalike: LookalikeView | None
    has_snapshot: bool
    progress: dict[str, int] | None
    failure: FailureRecord | None = None
    advert: AdvertView | None = None
    segment: SegmentView | None = Field(
        default=None,
        description="The model version, dataset version and rule a segment audience was built from.",
    )
    holdout: HoldoutView | None = Field(
        default=None, description="Segment audiences with a holdout: its share, seed and group sizes."
    )
    value_seed: ValueSeedView | None = Field(
        default=None, description="A value-based seed: where each customer's value came from."
    )
    activation_url: str = Field(description="Where its activation's progress is: GET this path.")
    sync: AudienceSyncView | None = Field(
        default=None, description="Segment audiences: the scheduled re-scoring and member replacement."
    )
    platform_changes: list[PlatformChangeView] = Field(
        default_factory=list,
        description="What was changed on the platform's side (renamed, paused, a budget, a pixel or Page "
        "no longer seen), found by the scheduled check or a refresh; the service does not change it back.",
    )


class AudienceList(CamelModel):
    audiences: list[AudienceView]


class AudienceCreated(CamelModel):
    """The response of docs/service-contract.md §4.3, plus the quality report and the lookalike."""

    success: bool
    audience_id: str
    platform_custom_audience_id: str | None
    user_count: int
    status: str
    message: str
    quality: dict[str, object]
    lookalike: LookalikeView | None = None
    activation_url: str | None = Field(
        default=None,
        description="Set when the upload continues in the background (202): GET it for the progress.",
    )
    platform_changes: list[PlatformChangeView] = Field(
        default_factory=list, description="What was changed on the platform's side (see AudienceView)."
    )


class SnapshotLink(CamelModel):
    url: str
    expires_in_seconds: int
    filename: str
