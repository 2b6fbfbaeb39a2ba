"""Pre-upload quality report: how many identifiers are usable and why the others are not.

The report holds counts only, never a raw or hashed value, so it can be logged, stored and shown in
the dashboard's readiness step.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field

from shared.audiences.identifiers import DropReason


class IdentifierQuality(BaseModel):
    """Counts for one identifier key (e.g. ``EMAIL``) over all input records."""

    model_config = ConfigDict(frozen=True)

    present: int = Field(description="Records with a non-blank value.")
    usable: int = Field(
        description="Values that will be uploaded (normalised and hashed, or already hashed)."
    )
    unusable: int = Field(description="Present values dropped; see unusable_reasons.")
    unusable_reasons: dict[str, int] = Field(description="Dropped values per reason, e.g. invalid_email.")
    missing: int = Field(description="Records without this identifier.")

    @classmethod
    def from_column(cls, prepared: Sequence[str], drops: Mapping[DropReason, int]) -> IdentifierQuality:
        """Counts for a prepared column ("" where unusable or missing) and the drop reasons seen for it."""
        total = len(prepared)
        usable = total - prepared.count("")
        # A blank value is "missing", not "unusable": the merchant simply did not have it.
        reasons = {reason.value: count for reason, count in drops.items() if reason is not DropReason.EMPTY}
        unusable = sum(reasons.values())
        return cls(
            present=usable + unusable,
            usable=usable,
            unusable=unusable,
            unusable_reasons=dict(sorted(reasons.items())),
            missing=total - usable - unusable,
        )


class QualityReport(BaseModel):
    """What an upload would send, computed before anything is sent."""

    model_config = ConfigDict(frozen=True)

    total_records: int
    identifiers: dict[str, IdentifierQuality] = Field(description="Per schema key, e.g. EMAIL, PHONE.")
    dropped_no_identifier: int = Field(description="Records without a usable e-mail or phone; not uploaded.")
    duplicate_user_ids: int = Field(description="Records whose user_id was already kept; not uploaded.")
    rows_to_upload: int


def build_report(
    columns: Mapping[str, Sequence[str]],
    drops: Mapping[str, Counter[DropReason]],
    *,
    dropped_no_identifier: int,
    duplicate_user_ids: int,
    rows_to_upload: int,
) -> QualityReport:
    """The report for prepared ``columns`` (key -> hashed values) and their ``drops`` (key -> reasons)."""
    identifiers = {key: IdentifierQuality.from_column(column, drops[key]) for key, column in columns.items()}
    total = len(next(iter(columns.values()), ()))
    return QualityReport(
        total_records=total,
        identifiers=identifiers,
        dropped_no_identifier=dropped_no_identifier,
        duplicate_user_ids=duplicate_user_ids,
        rows_to_upload=rows_to_upload,
    )
