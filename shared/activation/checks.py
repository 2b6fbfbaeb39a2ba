"""What an activation's rows must hold before anything is created on the platform: enough usable
users, values for a value-based seed; and the quality report of a list prepared in chunks."""

from __future__ import annotations

from shared.audiences.quality import IdentifierQuality, QualityReport
from shared.errors import ValidationFailed

MIN_SEED_USERS = 100


def merged_report(reports: list[QualityReport], later_duplicates: int) -> QualityReport:
    """One report for a list prepared in chunks: the counts added up, plus the records whose user_id
    a previous chunk had kept (``later_duplicates``), dropped as duplicates."""
    identifiers: dict[str, IdentifierQuality] = {}
    for key in reports[0].identifiers if reports else ():
        parts = [r.identifiers[key] for r in reports]
        reasons: dict[str, int] = {}
        for part in parts:
            for reason, count in part.unusable_reasons.items():
                reasons[reason] = reasons.get(reason, 0) + count
        identifiers[key] = IdentifierQuality(
            present=sum(p.present for p in parts),
            usable=sum(p.usable for p in parts),
            unusable=sum(p.unusable for p in parts),
            unusable_reasons=dict(sorted(reasons.items())),
            missing=sum(p.missing for p in parts),
        )
    return QualityReport(
        total_records=sum(r.total_records for r in reports),
        identifiers=identifiers,
        dropped_no_identifier=sum(r.dropped_no_identifier for r in reports),
        duplicate_user_ids=sum(r.duplicate_user_ids for r in reports) + later_duplicates,
        rows_to_upload=sum(r.rows_to_upload for r in reports) - later_duplicates,
    )


def check_usable(usable: int, objective: str) -> None:
    if usable == 0:
        raise ValidationFailed(
            "No user has a usable e-mail address or phone number, so nobody could be matched.",
            field="users",
            remedy="Send users with a valid email or phone; see the quality report from the dry run.",
        )
    if objective == "prospecting" and usable < MIN_SEED_USERS:
        raise ValidationFailed(
            f"A prospecting seed needs at least {MIN_SEED_USERS} users with a usable e-mail or phone; "
            f"this list has {usable}.",
            field="users",
            remedy="Add more users, or use the retargeting objective.",
        )


def check_values(with_value: int, rows: int, column: str | None) -> None:
    """A value-based seed needs customers with values: the platform refuses a value-based lookalike
    of a seed without them (docs/platform-notes.md §4.1), so none at all is refused before anything
    is created on the platform."""
    if with_value == 0:
        where = f"in the column {column!r}" if column else "predicted"
        raise ValidationFailed(
            f"None of the {rows} customers to upload has a value {where}, so the platform would refuse "
            "a value-based lookalike of them (a value-based seed needs customer values).",
            field="valueColumn" if column else "valueBased",
            remedy="Fill the column with each customer's value (a number of at least 0) and upload the "
            "list again, or leave valueBased out for a regular lookalike.",
        )
