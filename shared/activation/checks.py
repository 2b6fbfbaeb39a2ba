"""What an activation's rows must hold before anything is created on the platform: enough usable
users, values for a value-based seed."""

from __future__ import annotations

from shared.errors import ValidationFailed

MIN_SEED_USERS = 100


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
