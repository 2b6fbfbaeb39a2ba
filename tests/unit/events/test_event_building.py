"""Building server events once (docs/platform-notes.md §11.2-§11.5, §11.8): ids from the order, the
customer through the audiences' normaliser, Limited Data Use as the uploads carry it."""

from __future__ import annotations

from shared.audiences.identifiers import extern_id, sha256_hex
from shared.audiences.preparation import IdentifierColumns, prepare_columns
from shared.events.building import (
    ActionSource,
    Content,
    Customer,
    customers,
    purchase_event,
)

NOW = 1_790_000_000


def columns(**overrides: object) -> IdentifierColumns:
    values: dict[str, object] = {
        "user_ids": ["c-1", "c-2", "mary@example.com"],
        "emails": [" Mary@Example.com ", None, "bob@example.com"],
        "phones": ["07700 900123", None, sha256_hex("447700900999")],
        "first_names": ["Mary", None, "Bob"],
        "last_names": ["O'Neil", None, None],
        "countries": ["GB", "US", "gb"],
    }
    values.update(overrides)
    return IdentifierColumns(**values)  # type: ignore[arg-type]


def test_customer_information_is_what_an_audience_upload_would_carry() -> None:
    # Given three customers, one of them without an e-mail or phone
    shop = columns()
    # When their events' customer information is built
    built = customers(shop)
    # Then each hashed key is the upload row's cell, as a list, and external_id is the row's EXTERN_ID
    rows = {row[0]: row for row in prepare_columns(shop).rows}
    mary = built["c-1"].user_data
    assert mary == {
        "external_id": ["c-1"],
        "em": [rows["c-1"][1]],
        "ph": [rows["c-1"][2]],
        "fn": [rows["c-1"][3]],
        "ln": [rows["c-1"][4]],
        "country": [rows["c-1"][5]],
    }
    assert mary["em"] == [sha256_hex("mary@example.com")]
    assert mary["ph"] == [sha256_hex("447700900123")]


def test_a_value_already_hashed_passes_through_and_an_email_like_id_is_hashed() -> None:
    built = customers(columns())["mary@example.com"].user_data
    assert built["ph"] == [sha256_hex("447700900999")]
    assert built["external_id"] == [extern_id("mary@example.com")] == [sha256_hex("mary@example.com")]


def test_a_customer_an_upload_would_drop_still_has_an_event_with_external_id_alone() -> None:
    assert customers(columns())["c-2"] == Customer({"external_id": ["c-2"]}, None)


def test_limited_data_use_customers_carry_the_uploads_options() -> None:
    # Given a Californian who asked for Limited Data Use, a customer who did not, and one unknown
    shop = columns(
        countries=["US", "US", "GB"],
        limited_data_use=[True, False, None],
        states=["California", None, None],
    )
    # When their events are built
    built = customers(shop)
    events = {
        user_id: purchase_event(
            order_id=f"o-{user_id}",
            event_time=NOW,
            action_source=ActionSource.OTHER,
            customer=customer,
            value=10,
            currency="gbp",
        )
        for user_id, customer in built.items()
    }
    # Then the Californian's says LDU for California, the others say "not limited"
    assert events["c-1"]["data_processing_options"] == ["LDU"]
    assert (
        events["c-1"]["data_processing_options_country"],
        events["c-1"]["data_processing_options_state"],
    ) == (
        1,
        1000,
    )
    for user_id in ("c-2", "mary@example.com"):
        assert events[user_id]["data_processing_options"] == []
        assert "data_processing_options_country" not in events[user_id]


def test_without_limited_data_use_flags_no_options_are_sent() -> None:
    event = purchase_event(
        order_id="o-1",
        event_time=NOW,
        action_source=ActionSource.OTHER,
        customer=customers(columns())["c-1"],
        value=1,
        currency="GBP",
    )
    assert "data_processing_options" not in event


def test_a_purchase_is_identified_by_its_order_and_built_the_same_every_time() -> None:
    # Given an order of two products
    customer = customers(columns())["c-1"]

    def build() -> dict[str, object]:
        return purchase_event(
            order_id="order-1042",
            event_time=NOW,
            action_source=ActionSource.PHYSICAL_STORE,
            customer=customer,
            value=59.997,
            currency="gbp",
            contents=[Content("sku-1", 2, 19.999), Content("sku-2", 1, 20.0), Content("sku-1", 1, 19.999)],
            predicted_ltv=140.456,
        )

    # When its purchase is built twice (a retried sync)
    first, second = build(), build()
    # Then both are the same event, whose id is the order's
    assert first == second
    assert first["event_id"] == "order-1042"
    assert first["event_name"] == "Purchase"
    assert first["action_source"] == "physical_store"
    assert first["custom_data"] == {
        "value": 60.0,
        "currency": "GBP",
        "order_id": "order-1042",
        "content_type": "product",
        "content_ids": ["sku-1", "sku-2"],
        "contents": [
            {"id": "sku-1", "quantity": 2, "item_price": 20.0},
            {"id": "sku-2", "quantity": 1, "item_price": 20.0},
            {"id": "sku-1", "quantity": 1, "item_price": 20.0},
        ],
        "num_items": 4,
        "predicted_ltv": 140.46,
    }
    assert "event_source_url" not in first


def test_the_other_match_keys_are_sent_as_the_uploads_normalise_them() -> None:
    # Given customers with a city, state, postcode, date of birth, gender, external id and advertising id
    shop = columns(
        countries=["US", "US", "GB"],
        states=["California", None, None],
        cities=["San Francisco", "St. Albans", None],
        postcodes=["94105-1234", None, "SW1A 1AA"],
        dates_of_birth=["1985-03-07", None, "1985-02-30"],
        genders=["Female", None, "x"],
        external_ids=["shop-42", None, None],
        madids=["6D92078A-8246-4BA4-AE5B-76104861E7DC", None, None],
    )

    # When their events' customer information is built
    built = customers(shop)

    # Then each key is normalised by the uploads' rules and hashed (the advertising id is not), the date
    # of birth as one YYYYMMDD key, the external id in place of the user id
    first = built["c-1"].user_data
    assert first["external_id"] == ["shop-42"]
    assert first["ct"] == [sha256_hex("sanfrancisco")]
    assert first["st"] == [sha256_hex("ca")]
    assert first["zp"] == [sha256_hex("94105")]
    assert first["db"] == [sha256_hex("19850307")]
    assert first["ge"] == [sha256_hex("f")]
    assert first["madid"] == "6d92078a-8246-4ba4-ae5b-76104861e7dc"
    third = built["mary@example.com"].user_data
    assert third["zp"] == [sha256_hex("sw1a1")]  # a UK postcode's area, district and sector
    # and an unusable value (a date that does not exist, an unknown gender) is left out
    assert {"db", "ge", "ct"}.isdisjoint(third)
