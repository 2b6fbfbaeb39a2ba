"""The audience routes' request and response bodies (docs/service-contract.md §4.3-§4.7).

Fields are snake_case in Python and camelCase on the wire (``CamelModel``). ``ActivationProgress`` is
the one exception: the activation state machine reads it, in the snake_case of its own events.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field, model_validator

from shared.audiences.identifiers import AudienceUser
from shared.records.audiences import FailureRecord
from shared.targeting.models import SegmentSpec
from shared.wire_models import CamelModel


class CreateAudienceRequest(CamelModel):
    """``POST /platform-ads/audiences`` (docs/service-contract.md §4.3), plus the wizard's prospecting
    settings (docs/service-contract.md §4.7)."""

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
    objective: Literal["retargeting", "prospecting"] = "retargeting"
    model_id: str | None = Field(default=None, max_length=200)
    daily_budget: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    lookalike_size: Literal[1, 2, 5] | None = Field(
        default=None, description="Prospecting: lookalike size in percent."
    )
    lookalike_country: Literal["GB", "US", "CA", "AU"] | None = None
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


class RefreshAudienceRequest(CamelModel):
    """Replace an audience's members with a new list (the platform's ``usersreplace``)."""

    users: list[AudienceUser] = Field(min_length=1)
    country: str | None = Field(default=None, pattern="^[A-Za-z]{2}$")


class LookalikeView(CamelModel):
    platform_audience_id: str | None
    size_percent: int
    country: str
    status: str


class AdvertObjectView(CamelModel):
    kind: str
    platform_id: str | None
    state: str


class AdvertView(CamelModel):
    """Publish advert's objects on the platform: ids, and which a failed rollback left behind."""

    state: str
    objects: list[AdvertObjectView]
    failure: FailureRecord | None = None


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


class AudienceView(CamelModel):
    """What the service shows of an audience."""

    audience_id: str
    name: str
    status: str
    user_count: int
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


class SnapshotLink(CamelModel):
    url: str
    expires_in_seconds: int
    filename: str


class ActivationProgress(BaseModel):
    """What one activation step achieved; the state machine branches on it."""

    status: Literal["uploading", "waiting", "active"]
    wait_seconds: int = 0
    batches_done: int = 0
    batches_total: int = 0
