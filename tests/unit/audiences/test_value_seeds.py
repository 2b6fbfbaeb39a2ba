"""Value-based seeds (issue 15, item 3): the predicted value, the request's rules, the value column of
uploaded lists and the LOOKALIKE_VALUE column of upload rows (docs/platform-notes.md §4.1)."""

from __future__ import annotations

import io
from typing import Any, BinaryIO

import numpy as np
import pytest
from pydantic import ValidationError

from shared.activation.checks import check_values
from shared.audiences.identifiers import SCHEMA, AudienceUser
from shared.audiences.models import CreateAudienceRequest
from shared.audiences.preparation import prepare_audience
from shared.audiences.uploads import check_upload, customer_value
from shared.errors import ValidationFailed
from shared.targeting.values import predicted_values, shop_average_order_value

SEGMENT = {"modelName": "shop-purchase", "productId": "p-1", "rule": "top_n", "value": 100}
PROSPECTING = {"objective": "prospecting", "lookalikeSize": 1, "lookalikeCountry": "GB"}


# --- the predicted value -------------------------------------------------------------------------


def test_the_predicted_value_is_the_purchase_probability_times_the_customers_average_order() -> None:
    # Given two customers: 3 orders for 90 (30 an order), and 1 order for 200
    probabilities = np.array([0.5, 0.1])
    spend, orders = np.array([90.0, 200.0]), np.array([3.0, 1.0])
    # When
    values = predicted_values(probabilities, spend, orders, shop_average=72.5)
    # Then each is P(buy) x their own spend per order
    assert values.tolist() == [15.0, 20.0]


def test_a_customer_without_orders_takes_the_shops_average_order() -> None:
    # Given a shop of 4 orders for 290 (72.5 an order) and a customer who never ordered
    spend, orders = np.array([90.0, 200.0, 0.0]), np.array([3.0, 1.0, 0.0])
    shop = shop_average_order_value(spend, orders)
    # When
    values = predicted_values(np.array([0.5, 0.1, 0.2]), spend, orders, shop)
    # Then the newcomer is valued at P(buy) x the shop's average, not at nothing
    assert shop == 72.5
    assert values[2] == pytest.approx(14.5)


def test_predicted_values_are_finite_non_negative_and_rounded() -> None:
    values = predicted_values(
        np.array([np.nan, -0.2, 1.7, 0.333333]), np.array([10.0, 10.0, 10.0, 10.0]), np.ones(4), 0.0
    )
    assert values.tolist() == [0.0, 0.0, 10.0, 3.3333]


def test_a_shop_without_orders_averages_zero() -> None:
    assert shop_average_order_value(np.zeros(3), np.zeros(3)) == 0.0


# --- the request ---------------------------------------------------------------------------------


def request(**fields: Any) -> CreateAudienceRequest:
    return CreateAudienceRequest.model_validate({"name": "Seed", **fields})


def test_a_prospecting_segment_may_ask_for_a_value_based_seed() -> None:
    made = request(segment=SEGMENT, valueBased=True, **PROSPECTING)
    assert made.value_based
    assert made.value_column is None


def test_an_uploaded_list_names_its_value_column() -> None:
    made = request(
        uploadId="0b6f1c9e-2a43-4a7e-9d1f-5e0c2b7a8d34", valueBased=True, valueColumn="ltv", **PROSPECTING
    )
    assert made.value_column == "ltv"


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        ({"segment": SEGMENT, "valueBased": True}, "valueBased: a value-based seed is for a prospecting"),
        (
            {"users": [{"user_id": "u1", "email": "a@example.com"}], "valueBased": True, **PROSPECTING},
            "valueBased: a list of users carries no values",
        ),
        (
            {"uploadId": "0b6f1c9e-2a43-4a7e-9d1f-5e0c2b7a8d34", "valueBased": True, **PROSPECTING},
            "valueColumn: name the uploaded CSV's column",
        ),
        (
            {"segment": SEGMENT, "valueBased": True, "valueColumn": "ltv", **PROSPECTING},
            "valueColumn: a segment's values are predicted",
        ),
        ({"segment": SEGMENT, "valueColumn": "ltv", **PROSPECTING}, "valueColumn: only used with valueBased"),
    ],
)
def test_a_value_based_request_without_a_source_of_values_is_refused_saying_what_to_do(
    fields: dict[str, Any], says: str
) -> None:
    with pytest.raises(ValidationError) as raised:
        request(**fields)
    assert says in str(raised.value)


# --- values in files and rows --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cell", "value"), [("12.50", 12.5), ("0", 0.0), (" 7 ", 7.0), ("", None), ("  ", None)]
)
def test_a_value_cell_is_a_number_of_at_least_zero_or_blank(cell: str, value: float | None) -> None:
    assert customer_value(cell) == value


@pytest.mark.parametrize(
    ("cell", "reason"), [("-3", "at least 0"), ("£12", "a number"), ("1e999", "at least 0")]
)
def test_a_bad_value_cell_is_refused_with_the_reason_not_the_cell(cell: str, reason: str) -> None:
    with pytest.raises(ValueError, match="must be") as raised:
        customer_value(cell)
    assert reason in str(raised.value)
    assert cell not in str(raised.value)


def test_rows_of_a_value_based_seed_end_with_the_value_unhashed() -> None:
    # Given two users, one with a value and one without
    users = [
        AudienceUser(user_id="u1", email="mary@example.com"),
        AudienceUser(user_id="u2", email="bob@example.com"),
    ]
    # When they are prepared with their values
    prepared = prepare_audience(users, values=[44.5, None])
    # Then the schema ends with LOOKALIKE_VALUE and each row with its value ("" for none)
    assert prepared.schema == (*SCHEMA, "LOOKALIKE_VALUE")
    assert [row[-1] for row in prepared.rows] == [44.5, ""]
    assert prepared.rows[0][1] == "f1904cf1a9d73a55fa5de0ac823c4403ded71afd4c3248d00bdcd0866552bb79"


def test_rows_without_values_keep_the_plain_schema() -> None:
    prepared = prepare_audience([AudienceUser(user_id="u1", email="mary@example.com")])
    assert prepared.schema == SCHEMA
    assert len(prepared.rows[0]) == len(SCHEMA)


def test_a_negative_value_is_never_sent() -> None:
    with pytest.raises(ValidationFailed) as raised:
        prepare_audience([AudienceUser(user_id="u1", email="mary@example.com")], values=[-1.0])
    assert raised.value.field == "valueColumn"


def test_a_seed_with_no_value_at_all_is_refused_naming_the_column_and_the_remedy() -> None:
    with pytest.raises(ValidationFailed) as raised:
        check_values(0, 250, "ltv")
    assert raised.value.field == "valueColumn"
    assert "None of the 250 customers" in raised.value.message
    assert raised.value.remedy is not None
    assert "number of at least 0" in raised.value.remedy
    check_values(1, 250, "ltv")  # one value is enough: the platform weighs the ones it has


class ListUploads:
    """``UploadBlobs`` over one uploaded CSV in memory."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def open(self, key: str) -> BinaryIO:
        return io.BytesIO(self.data)

    def size(self, key: str) -> int | None:
        return len(self.data)

    def upload_url(self, key: str, content_type: str, expires_seconds: int) -> str:
        raise AssertionError("not asked for")


UPLOAD = "0b6f1c9e-2a43-4a7e-9d1f-5e0c2b7a8d34"


def test_an_uploaded_list_without_the_named_value_column_is_refused() -> None:
    data = b"user_id,email\nu1,a@example.com\n"
    with pytest.raises(ValidationFailed) as raised:
        check_upload("org", UPLOAD, ListUploads(data), 1_000_000, value_column="ltv")
    assert raised.value.field == "valueColumn"
    assert "no column named 'ltv'" in raised.value.message


def test_accepting_an_uploaded_list_with_its_value_column_reads_only_its_start() -> None:
    # The cells are SelectUsers' to check (tests/unit/audiences/test_audience_service.py): a bad one
    # further down does not slow or fail the POST.
    data = b"user_id,email,ltv\nu1,a@example.com,12.5\nu2,b@example.com,lots\n"
    check_upload("org", UPLOAD, ListUploads(data), 1_000_000, value_column="ltv")
