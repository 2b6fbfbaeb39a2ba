"""Custom Audiences and lookalikes (docs/platform-notes.md §2-§4): one request per function.

Identifiers arrive here already normalised and hashed (``shared.audiences``); this module only moves
them. Batching across requests is the pipeline's job; one call carries at most ``MAX_ROWS_PER_CALL``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from shared.errors import ValidationFailed
from shared.platform.client import GraphClient
from shared.platform.encoding import ad_account_node

MAX_ROWS_PER_CALL = 10_000
INT64_MAX = 2**63 - 1
LOOKALIKE_MIN_RATIO = 0.01
LOOKALIKE_MAX_RATIO = 0.20


class CreatedObject(BaseModel):
    """The id the platform assigned to a created object."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    id: str


class UploadSession(BaseModel):
    """One upload session (docs/platform-notes.md §3.3): its id, how many rows it carries in all, and
    how many go in each request. Every batch of the session is sent with the same ``session_id``."""

    model_config = ConfigDict(frozen=True)

    session_id: int = Field(gt=0, le=INT64_MAX, description="Advertiser-chosen positive int64.")
    total_rows: int = Field(ge=0, description="Rows in the whole session; sent as estimated_num_total.")
    batch_size: int = Field(default=MAX_ROWS_PER_CALL, ge=1, le=MAX_ROWS_PER_CALL)
    # Set when some batches are not full (a list hashed in parts: each part's last batch is short);
    # else every batch but the last holds batch_size rows.
    batches: int | None = Field(default=None, ge=0, description="Batches in the session, when not full.")

    @property
    def total_batches(self) -> int:
        """Number of batches: ``batches`` when given, else ceil(total_rows / batch_size); 0 for an
        empty audience."""
        return self.batches if self.batches is not None else -(-self.total_rows // self.batch_size)


@dataclass(frozen=True, slots=True)
class UploadBatch:
    """One request's worth of rows (columns in the upload's schema order) at ``batch_seq`` of ``session``.

    A dataclass, not a pydantic model: rows are already validated, and re-validating 10,000 rows per
    batch would cost more than building the request.
    """

    session: UploadSession
    batch_seq: int
    # Strings, but for the Limited Data Use options and a value-based seed's LOOKALIKE_VALUE (numbers).
    rows: Sequence[Sequence[Any]]

    def __post_init__(self) -> None:
        if not 1 <= self.batch_seq <= self.session.total_batches:
            raise ValidationFailed(
                f"Batch {self.batch_seq} is not in this session of {self.session.total_batches} batches.",
                field="batch_seq",
                remedy="Batches are numbered from 1 to the session's total_batches.",
            )

    @property
    def session_id(self) -> int:
        return self.session.session_id

    @property
    def last_batch_flag(self) -> bool:
        return self.batch_seq == self.session.total_batches

    @property
    def estimated_num_total(self) -> int:
        return self.session.total_rows


class UploadResult(BaseModel):
    """What the platform counted for one upload call. ``num_received`` is cumulative per session.

    Only the number of invalid samples is kept: the samples themselves are identifiers.
    """

    model_config = ConfigDict(frozen=True)

    num_received: int
    num_invalid_entries: int
    invalid_entry_samples_count: int
    session_id: str | None = None

    @classmethod
    def from_graph(cls, body: dict[str, Any]) -> UploadResult:
        samples = body.get("invalid_entry_samples")
        # Documented both as a map and as an array of strings.
        count = len(samples) if isinstance(samples, dict | list) else 0
        session_id = body.get("session_id")
        return cls(
            num_received=int(body.get("num_received") or 0),
            num_invalid_entries=int(body.get("num_invalid_entries") or 0),
            invalid_entry_samples_count=count,
            session_id=str(session_id) if session_id is not None else None,
        )


def marked(description: str, marker: str) -> str:
    """``description`` ending with the service's ``marker`` (``[ref <marker>]``): what a create sends,
    so that the object can be found again when the create's answer is lost."""
    return f"{description} [ref {marker}]"


def find_marked(client: GraphClient, ad_account_id: str, marker: str) -> list[CreatedObject]:
    """The audiences (custom or lookalike) on the ad account whose description carries ``marker``
    (the edge's ``filtering``, docs/platform-notes.md §2.4): what a create whose answer was lost may
    have made. Deleted audiences are not listed by the platform."""
    path = f"{ad_account_node(ad_account_id)}/customaudiences"
    query = {
        "fields": "id,description",
        "filtering": [{"field": "description", "operator": "CONTAIN", "value": f"[ref {marker}]"}],
    }
    return [CreatedObject.model_validate(node) for node in client.iterate(path, query)]


def list_audience_names(client: GraphClient, ad_account_id: str) -> dict[str, str]:
    """The id and name of every audience (custom and lookalike) the ad account has now, every page of
    its ``customaudiences`` edge: what the scheduled drift check compares the service's audiences with
    (an audience deleted in the ads manager is no longer listed; one renamed there has its new name)."""
    path = f"{ad_account_node(ad_account_id)}/customaudiences"
    return {
        str(node["id"]): str(node.get("name") or "")
        for node in client.iterate(path, {"fields": "id,name", "limit": 500})
    }


def read_audience_node(client: GraphClient, audience_id: str, fields: str) -> dict[str, Any]:
    """The audience's ``fields`` as the platform has them now (``GET /<id>``). Raises the platform's
    "does not exist" (100/33) for an audience deleted there."""
    return dict(client.get(audience_id, {"fields": fields}).body)


def lookalike_name(audience_name: str, size_percent: int, country: str) -> str:
    """The name the service gives the lookalike of the audience called ``audience_name``."""
    return f"{audience_name} - lookalike {size_percent}% {country}"


def create_custom_audience(
    client: GraphClient,
    ad_account_id: str,
    name: str,
    description: str,
    *,
    value_based: bool = False,
    marker: str | None = None,
) -> CreatedObject:
    """Create an empty customer-list audience (``subtype=CUSTOM``, user-provided data); ``marker``
    (chosen by the caller before sending) goes at the end of the description (:func:`marked`).

    ``value_based`` makes it a customer-value seed (``is_value_based``, docs/platform-notes.md §4.1):
    every row uploaded to it must then carry ``LOOKALIKE_VALUE`` (:func:`add_users` with that schema
    column), and a lookalike made from it is value-based."""
    fields: dict[str, Any] = {
        "name": name,
        "description": marked(description, marker) if marker else description,
        "subtype": "CUSTOM",
        "customer_file_source": "USER_PROVIDED_ONLY",
    }
    if value_based:
        fields["is_value_based"] = True
    response = client.post(f"{ad_account_node(ad_account_id)}/customaudiences", fields)
    return CreatedObject.model_validate(response.body)


def delete_custom_audience(client: GraphClient, audience_id: str) -> None:
    """Delete an audience on the platform (irreversible). Raises ``LookalikesExist`` if it seeds any."""
    client.delete(audience_id)


def add_users(
    client: GraphClient,
    audience_id: str,
    schema: Sequence[str],
    batch: UploadBatch,
) -> UploadResult:
    """Add one batch of hashed rows (columns in ``schema`` order) to an audience within its session.
    A value-based seed's schema ends with ``LOOKALIKE_VALUE`` and its rows with the value, a number
    (or ``""`` for none), sent unhashed (docs/platform-notes.md §4.1).

    Sent as one JSON body (docs/platform-notes.md §3.1), which the platform takes as it takes the SDK's
    form fields. Retried on transient failures: adding the same people twice does not duplicate them.
    """
    response = client.post(
        f"{audience_id}/users", upload_request(schema, batch), idempotent=True, json_body=True
    )
    return UploadResult.from_graph(response.body)


def replace_users(
    client: GraphClient,
    audience_id: str,
    schema: Sequence[str],
    batch: UploadBatch,
) -> UploadResult:
    """Send one batch of a replace session (batch 1 starts it, ``last_batch_flag`` ends it).

    Not retried on ambiguous failures: resending batch 1 would restart or reject the replace.
    """
    response = client.post(f"{audience_id}/usersreplace", upload_request(schema, batch), json_body=True)
    return UploadResult.from_graph(response.body)


def create_lookalike(
    client: GraphClient,
    ad_account_id: str,
    name: str,
    origin_audience_id: str,
    ratio: float,
    country: str,
    *,
    value_based: bool = False,
    marker: str | None = None,
) -> CreatedObject:
    """Create a lookalike of ``origin_audience_id`` in ``country`` (ISO-2) at ``ratio`` (0.01 = 1 %);
    ``marker`` goes in its description (:func:`marked`).

    A lookalike of a value-based seed is value-based; the platform has no other flag for it. With
    ``value_based`` the spec is written as the SDK's value-based example writes it (``type``
    ``custom_ratio``, docs/platform-notes.md §4.1). A seed without values is refused (2654,
    ``LookalikeRejected``)."""
    if not LOOKALIKE_MIN_RATIO <= ratio <= LOOKALIKE_MAX_RATIO:
        raise ValidationFailed(
            f"Lookalike ratio must be between {LOOKALIKE_MIN_RATIO} and {LOOKALIKE_MAX_RATIO}.", field="ratio"
        )
    if len(country) != 2 or not country.isalpha():
        raise ValidationFailed("Lookalike country must be a two-letter ISO code.", field="country")
    response = client.post(
        f"{ad_account_node(ad_account_id)}/customaudiences",
        {
            "name": name,
            "subtype": "LOOKALIKE",
            "origin_audience_id": origin_audience_id,
            "description": marked("Lookalike", marker) if marker else None,
            "lookalike_spec": (
                {"type": "custom_ratio", "ratio": ratio, "country": country.upper()}
                if value_based
                else {"ratio": ratio, "country": country.upper()}
            ),
        },
    )
    return CreatedObject.model_validate(response.body)


def upload_request(schema: Sequence[str], batch: UploadBatch) -> dict[str, Any]:
    """The fields of one upload request (``/users``, ``/usersreplace``): ``session`` and ``payload``
    (docs/platform-notes.md §3.2). The dry run writes exactly this, so it shows what is sent.

    Raises ``ValidationFailed`` for an empty schema, more than ``MAX_ROWS_PER_CALL`` rows (or none),
    or a row without one value per schema column.
    """
    if not schema:
        raise ValidationFailed("An upload needs at least one schema column.", field="schema")
    if not 0 < len(batch.rows) <= MAX_ROWS_PER_CALL:
        raise ValidationFailed(f"An upload carries 1 to {MAX_ROWS_PER_CALL} rows.", field="rows")
    if any(len(row) != len(schema) for row in batch.rows):
        raise ValidationFailed("Every row must have one value per schema column.", field="rows")
    return {
        "session": {
            "session_id": batch.session_id,
            "batch_seq": batch.batch_seq,
            "last_batch_flag": batch.last_batch_flag,
            "estimated_num_total": batch.estimated_num_total,
        },
        # is_raw: the columns are individual keys (EMAIL, FN, ...), not combined ones like LN_FN_ZIP;
        # the platform requires it for multi-key uploads.
        "payload": {"schema": list(schema), "is_raw": True, "data": [list(row) for row in batch.rows]},
    }
