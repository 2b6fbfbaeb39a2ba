"""A merchant's data source: the immutable dataset versions a sync stores, and their training state."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

FileKind = Literal["customers", "products", "orders"]
TrainingState = Literal["pending", "running", "succeeded", "failed"]
FILE_KINDS: tuple[FileKind, ...] = ("customers", "products", "orders")
# The model whose training puts a dataset version in force: audiences, segments and targeting score with
# it, so a version whose data its training refused never replaces data it accepted.
PUBLISHED_BY = "purchase"


class ModelTraining(BaseModel):
    """One model being trained from a dataset version: where it stands and what it produced."""

    model_name: str
    state: TrainingState = "pending"
    stage: str | None = Field(default=None, description="The training step under way (running only).")
    model_version: str | None = None
    error: str | None = None
    remedy: str | None = Field(default=None, description="What to do about a failure, when its cause says.")
    refused: bool = Field(
        default=False,
        description="The training refused the data itself (too few orders, a history too short): training "
        "the same data again refuses it again. False for a crash or a time-out, which a retrain may mend.",
    )
    updated_at: datetime


# The customers file's columns that are match keys, in the order a report lists them.
MATCH_KEYS: tuple[str, ...] = (
    "email",
    "phone",
    "first_name",
    "last_name",
    "city",
    "state",
    "postcode",
    "country",
    "date_of_birth",
    "gender",
    "external_id",
    "madid",
)


class MatchKeyCoverage(BaseModel):
    """How many of a version's customers have one match key: given in the file, and usable once
    normalised by the platform's rules (what an audience upload would send)."""

    given: int
    usable: int


class DatasetVersion(BaseModel):
    """One sync's result, never changed after it is stored except for its ``training`` progress. It is
    in force (the store's pointer) from when its ``PUBLISHED_BY`` model's training ends, unless that
    training refused the data and better data is in force (data a training did not refuse, or refused
    data with more customers).

    ``keys`` name the stored objects (data bucket, SSE-KMS): the three validated files, the customers'
    identifier coverage (``identifiers``) and the full rejection report (``report``).
    """

    org_id: str
    version: str
    created_at: datetime
    keys: dict[str, str]
    row_counts: dict[str, int] = Field(description="Rows stored per file (the good rows).")
    rows_read: dict[str, int] = Field(description="Rows read per file, good and rejected.")
    rejected_count: int
    rejected_rows_accepted: bool
    orders_end: datetime | None = Field(default=None, description="Time of the latest order stored.")
    from_checkout: dict[str, int] = Field(
        default_factory=dict,
        description="Rows of row_counts the hosted checkout's paid orders added: customers (buyers not in "
        "the customers file) and orders; empty when none did (or for a version stored before it was kept).",
    )
    training: dict[str, ModelTraining] = Field(default_factory=dict)
    match_keys: dict[str, MatchKeyCoverage] = Field(
        default_factory=dict,
        description="Coverage per match key (MATCH_KEYS), computed at sync; empty for a version stored "
        "before it was.",
    )
    matchable_customers: int | None = Field(
        default=None,
        description="Customers with a usable e-mail or phone, the ones an audience can upload (None: a "
        "version stored before it was counted).",
    )


SyncState = Literal["validating", "review", "synced", "failed"]


class SyncRecord(BaseModel):
    """One sync request: validating in the background, then ``review`` (rows were rejected and the
    user has not accepted that), ``synced`` (a version was stored; in force once its purchase model is
    trained) or ``failed`` (a file-level problem,
    described by ``error``; the previous dataset stays in force)."""

    org_id: str
    sync_id: str
    state: SyncState = "validating"
    keys: dict[str, str] = Field(description="The uploaded files, by kind.")
    accept_rejected_rows: bool = False
    horizon_days: int | None = Field(
        default=None, description="The prediction horizon both models are trained for (None: default)."
    )
    rows_read: dict[str, int] = Field(default_factory=dict)
    rejected_count: int = 0
    rejected_rows: list[dict[str, str | int]] = Field(
        default_factory=list, description="The first rejected rows (file, row, field, reason)."
    )
    recognised: dict[str, str] = Field(
        default_factory=dict, description="Files read as a shop system's export: kind -> what as."
    )
    mappings: dict[str, dict[str, str]] = Field(
        default_factory=dict,
        description="The columns the merchant matched, by kind: file header -> service column ('': not "
        "read). Kept with the sync, so the organization's next sync starts from them.",
    )
    dataset_version: str | None = None
    error: dict[str, str] | None = Field(default=None, description="message, field and remedy.")
    created_at: datetime
    updated_at: datetime
