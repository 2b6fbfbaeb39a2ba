"""Request and response bodies of targeting (camelCase on the wire)."""

from __future__ import annotations

import math
from typing import Annotated, Literal

from pydantic import Field, WithJsonSchema, model_validator

from shared.audiences.holdout import DEFAULT_HOLDOUT_PERCENT, MAX_HOLDOUT_PERCENT
from shared.wire_models import CamelModel, documented_rules, has, when

# A top_n value past 2^53 has no exact float (the service reads numbers as 64-bit floats).
MAX_TOP_N = 2**53
# The largest threshold a segment takes, either sign: far past any model's score, and inside what
# DynamoDB stores (magnitudes to 9.99E+125; -1.4E+135 was a 500 storing the audience, found by the fuzzer).
MAX_THRESHOLD = 1e9

# SegmentRule's validator, as JSON Schema: the value each rule takes.
SEGMENT_VALUE_BY_RULE = {
    "oneOf": [
        {
            "properties": {
                "rule": {"const": "top_n"},
                "value": {"type": "integer", "minimum": 1, "maximum": MAX_TOP_N},
            }
        },
        {"properties": {"rule": {"const": "top_percent"}, "value": {"exclusiveMinimum": 0, "maximum": 100}}},
        {
            "properties": {
                "rule": {"const": "threshold"},
                "value": {"minimum": -MAX_THRESHOLD, "maximum": MAX_THRESHOLD},
            }
        },
    ]
}
# A holdout's seed: a number or a string of digits up to 2^63 - 1 (what the split takes). openapi.json
# offers the numbers JSON carries exactly (to 2^53 - 1; the document's numbers are floats) and strings
# of up to 18 digits, all below that limit.
HoldoutSeed = Annotated[
    int,
    Field(ge=0, le=2**63 - 1),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "integer", "minimum": 0, "maximum": 2**53 - 1},
                {"type": "string", "pattern": "^[0-9]{1,18}$"},
            ]
        }
    ),
]
# Prospecting needs the lookalike's country.
PROSPECTING = has(objective={"const": "prospecting"})

MIN_SEED_USERS = 100  # docs/platform-notes.md: a lookalike's seed needs 100 people in its country


class SegmentRule(CamelModel):
    """``top_n`` (a count), ``top_percent`` (0-100] or ``threshold`` (a score, keep those >= it)."""

    model_config = documented_rules(SEGMENT_VALUE_BY_RULE)

    rule: Literal["top_n", "top_percent", "threshold"]
    value: float = Field(description="N users, X percent, or the minimum score.")

    @model_validator(mode="after")
    def _value_fits_the_rule(self) -> SegmentRule:
        if self.rule == "top_n" and (self.value < 1 or self.value != int(self.value)):
            raise ValueError("value: top_n needs a whole number of users, at least 1")
        if self.rule == "top_percent" and not 0 < self.value <= 100:
            raise ValueError("value: top_percent needs a percentage above 0 and at most 100")
        if self.rule == "threshold" and not (math.isfinite(self.value) and abs(self.value) <= MAX_THRESHOLD):
            raise ValueError(
                f"value: threshold needs a finite score from {-MAX_THRESHOLD:g} to {MAX_THRESHOLD:g}"
            )
        return self


class SegmentSpec(SegmentRule):
    """A predictive segment: the users of ``modelName``'s scores for ``productId`` that the rule keeps."""

    model_name: str = Field(min_length=1, max_length=128)
    product_id: str = Field(min_length=1, max_length=200)
    exclude_purchased: bool = Field(
        default=False,
        description="Leave out the users who already bought the product: a seed of new buyers only (the "
        "rule then counts and ranks only the users who never bought it).",
    )


class PreviewRequest(SegmentSpec):
    model_config = documented_rules(
        SEGMENT_VALUE_BY_RULE, when(PROSPECTING, has(lookalikeCountry={"type": "string"}))
    )

    objective: Literal["retargeting", "prospecting"] = "retargeting"
    lookalike_country: Literal["GB", "US", "CA", "AU"] | None = Field(
        default=None, description="Prospecting: the country whose seed users are counted."
    )
    holdout_percent: float = Field(
        default=DEFAULT_HOLDOUT_PERCENT,
        ge=0,
        le=MAX_HOLDOUT_PERCENT,
        allow_inf_nan=False,
        description="The share of the segment the activation will hold out to measure lift (its default).",
    )
    holdout_seed: HoldoutSeed | None = Field(
        default=None,
        description="The holdout's seed (a number or a string of digits); omit it for a fresh one, "
        "which the answer gives. Activate with the same seed and share to upload exactly the users "
        "counted here.",
    )

    @model_validator(mode="after")
    def _prospecting_names_a_country(self) -> PreviewRequest:
        if self.objective == "prospecting" and self.lookalike_country is None:
            raise ValueError("lookalikeCountry is required for prospecting (GB, US, CA or AU)")
        return self


class HistogramView(CamelModel):
    edges: list[float] = Field(description="Bin edges, one more than the counts.")
    all_users: list[int] = Field(description="Users per bin, everyone scored.")
    segment: list[int] = Field(description="Users per bin, the segment only.")


class CoverageView(CamelModel):
    """How many of the segment have each identifier, as given and after normalisation."""

    without_customer_row: int = Field(description="Scored users missing from the synced customers file.")
    email: int
    phone: int
    name: int = Field(description="First and last name both given.")
    usable_email: int
    usable_phone: int
    usable_name: int
    usable: int = Field(
        description="Users with an e-mail or phone the platform can match (the holdout then keeps some "
        "of them out: holdout.uploadedUsable is what uploads)."
    )


class SeedView(CamelModel):
    country: str
    usable_in_country: int = Field(
        description="Users of the uploaded group (after the holdout) the platform can match in the country."
    )
    minimum: int = MIN_SEED_USERS
    reached: bool


class HoldoutPreview(CamelModel):
    """What the activation's holdout does to the segment: who is kept out, and what is uploaded."""

    percent: float
    seed: str = Field(description="The split's seed, a string of digits (it can exceed 2^53).")
    held_out: int = Field(
        description="Segment users with a customer row kept out of the upload, at random within each "
        "score band, so the lift report can compare buyers with and without the ads."
    )
    uploaded: int = Field(description="The segment users with a customer row that are not held out.")
    uploaded_usable: int = Field(
        description="Of those, the users with an e-mail or phone the platform can match: what will upload."
    )


class CountryCount(CamelModel):
    country: str = Field(description="ISO 3166 alpha-2, upper case.")
    users: int


class TargetingWarning(CamelModel):
    code: Literal["model_stale", "model_retrain", "model_outdated", "segment_empty", "seed_too_small"]
    message: str


class PreviewView(CamelModel):
    model_name: str
    model_version: str
    dataset_version: str = Field(description="The synced dataset the identifiers come from.")
    product_id: str
    rule: str
    value: float
    scored_users: int
    size: int = Field(description="Users the segment keeps.")
    cut_score: float | None = Field(description="The lowest score kept (None for an empty segment).")
    cut_rank: int = Field(description="Rank of the last user kept, 1 the best (0 for an empty segment).")
    histogram: HistogramView
    coverage: CoverageView
    holdout: HoldoutPreview
    countries: list[CountryCount] = Field(
        description="Where the users to upload are (their customers file's country), most first, at most "
        "five: the countries a retargeting advert should deliver in."
    )
    seed: SeedView | None
    warnings: list[TargetingWarning]
