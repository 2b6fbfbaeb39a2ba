"""Request and response bodies of the data source endpoints (camelCase on the wire)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field, model_validator

from shared.ml.horizon import MAX_HORIZON_DAYS, MIN_HORIZON_DAYS
from shared.records.datasources import FileKind, ModelTraining, SyncState
from shared.wire_models import CamelModel, documented_rules, has

FileFormat = Literal["csv", "jsonl"]


class UploadLinksRequest(CamelModel):
    format: FileFormat = Field(default="csv", description="csv (header row) or jsonl (one object a line).")


class FileUploadLink(CamelModel):
    kind: FileKind
    key: str
    url: str
    method: Literal["POST"] = "POST"
    fields: dict[str, str] = Field(
        description="Send these as form fields, then the file as the last field, file, in one "
        "multipart/form-data POST to url. S3 refuses a file larger than maxFileBytes."
    )
    content_type: str
    expires_in_seconds: int


class UploadLinks(CamelModel):
    upload_id: str
    files: list[FileUploadLink]
    columns: dict[str, list[str]] = Field(description="The columns each file may have (README: Data source).")
    max_file_bytes: int


class SyncRequest(CamelModel):
    """Sync the three files of an upload (``uploadId``), or objects already in the data bucket under
    ``data-sources/<organization>/`` (``files``)."""

    model_config = documented_rules(
        {
            "oneOf": [
                {
                    **has(uploadId={"type": "string"}),
                    "properties": {"uploadId": {"type": "string"}, "files": {"type": "null"}},
                },
                {
                    **has(files={"type": "object"}),
                    "properties": {
                        "uploadId": {"type": "null"},
                        "files": {"type": "object", "required": ["customers", "products", "orders"]},
                    },
                },
            ]
        }
    )

    upload_id: str | None = None
    format: FileFormat | None = Field(
        default=None,
        description="The format the upload's links were made for; left out, the format of the files sent "
        "to them. Not read with files (each is read as its content shows).",
    )
    files: dict[FileKind, str] | None = Field(default=None, description="customers, products, orders keys.")
    accept_rejected_rows: bool = Field(
        default=False,
        description="Keep the good rows when some are rejected (after reviewing the report); "
        "otherwise a sync with rejected rows stores nothing and waits in state review.",
    )
    horizon_days: int | None = Field(
        default=None,
        ge=MIN_HORIZON_DAYS,
        le=MAX_HORIZON_DAYS,
        description="Prediction horizon in days both models are trained for after the sync: the purchase "
        "model predicts who buys in the next horizonDays. Default 30, or the longest the order history "
        "allows when it is shorter.",
    )

    mappings: dict[FileKind, dict[str, str]] | None = Field(
        default=None,
        description="For a file whose header is neither the service's columns nor a shop export the "
        "service recognises: each header cell -> the service column it holds ('' for a column not read; "
        "a cell not named keeps its own name). Saved with the sync for the organization's next one "
        "(GET /platform-ads/data-source, mappings).",
    )

    @model_validator(mode="after")
    def _one_source(self) -> SyncRequest:
        if (self.upload_id is None) == (self.files is None):
            raise ValueError("uploadId: send either an uploadId or files, not both or neither")
        if self.files is not None and set(self.files) != {"customers", "products", "orders"}:
            raise ValueError("files: name the customers, products and orders objects")
        return self


class ServiceColumn(CamelModel):
    name: str
    required: bool
    aliases: list[str] = Field(description="Other names the column is read under.")


class ExportLayoutView(CamelModel):
    system: str
    kind: FileKind
    title: str
    signature: list[str] = Field(description="Header cells that are all present in such an export.")


class RejectedRow(CamelModel):
    file: str
    row: int
    field: str
    reason: str


class SyncView(CamelModel):
    sync_id: str
    state: SyncState
    accept_rejected_rows: bool
    horizon_days: int | None = Field(description="The horizon the models train for (null: the default).")
    rows_read: dict[str, int]
    rejected_count: int
    rejected_rows: list[RejectedRow] = Field(
        description="The first rejected rows; rejectedCount has them all."
    )
    recognised: dict[str, str] = Field(
        description="The files read as a shop system's export, by kind: what each was read as "
        '("a Shopify orders export"; docs/shop-exports.md).'
    )
    dataset_version: str | None
    error: dict[str, str] | None
    created_at: datetime
    updated_at: datetime


class ModelTrainingView(CamelModel):
    model_name: str
    state: str
    stage: str | None
    model_version: str | None
    error: str | None
    remedy: str | None = Field(default=None, description="What to do about the failure, when its cause says.")
    updated_at: datetime

    @classmethod
    def of(cls, training: ModelTraining) -> ModelTrainingView:
        return cls.model_validate(training.model_dump())


class MatchKeyView(CamelModel):
    given: int = Field(description="Customers with a value for this key in the file.")
    usable: int = Field(
        description="Customers whose value survives the platform's normalisation (what an audience sends)."
    )


class DatasetVersionView(CamelModel):
    version: str
    created_at: datetime
    row_counts: dict[str, int]
    rows_read: dict[str, int]
    rejected_count: int
    rejected_rows_accepted: bool
    orders_end: datetime | None
    from_checkout: dict[str, int] = Field(
        description="Of rowCounts, what the hosted checkout's paid orders added (they join every sync): "
        "customers (buyers not in the customers file) and orders; empty when none did."
    )
    training: dict[str, ModelTrainingView]
    match_keys: dict[str, MatchKeyView] = Field(
        description="Coverage per match key, by the customers file's column (email, phone, first_name, "
        "last_name, city, state, postcode, country, date_of_birth, gender, external_id, madid), computed "
        "at sync over rowCounts.customers; empty for a version stored before it was."
    )
    matchable_customers: int | None = Field(
        description="Customers with a usable e-mail or phone: those an audience can upload (null: a "
        "version stored before it was counted)."
    )


class ProductMatch(CamelModel):
    product_id: str = Field(description="The product's id as the products file gives it (always text).")
    name: str | None
    category: str | None


class ProductSearchView(CamelModel):
    products: list[ProductMatch] = Field(
        description="The products whose id or name contains the search text, best first: the exact id, "
        "ids that start with it, names that start with it, names with a word that starts with it, then "
        "any that contain it; at most limit."
    )
    matches: int = Field(description="How many products match in all (products holds the first ones).")
    catalog_size: int = Field(description="Products in the dataset in force.")
    dataset_version: str | None = Field(description="The dataset searched (None before the first sync).")


class DataSourceView(CamelModel):
    current: DatasetVersionView | None = Field(
        description="The dataset in force (None before the first sync)."
    )
    versions: list[DatasetVersionView] = Field(description="Every stored version, newest first.")
    syncs: list[SyncView] = Field(description="The latest syncs, newest first.")
    columns: dict[str, list[ServiceColumn]] = Field(description="The service's columns of each file.")
    layouts: list[ExportLayoutView] = Field(
        description="The shop exports read as they are (docs/shop-exports.md): no mapping is needed."
    )
    mappings: dict[str, dict[str, str]] = Field(
        description="The columns the organization last matched for each file (header -> service column, "
        "'' not read), from its latest sync that had a mapping for it."
    )
