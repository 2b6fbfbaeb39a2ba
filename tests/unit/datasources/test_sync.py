"""Sync: a shop's three files are validated whole, every bad row is named by file, line, column and
reason (never by value), and a dataset version is stored only when nothing is left to decide."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import boto3
import pytest

from shared.datasources.coverage import read_coverage
from shared.datasources.models import SyncRequest, UploadLinksRequest
from shared.errors import Conflict, NotFound, ValidationFailed
from shared.records.datasources import ModelTraining
from tests.hostile_files import WORKBOOK, gzip_bomb
from tests.unit.datasources.conftest import ORG, DataSourceWorld

CUSTOMERS = (
    b"user_id,email,first_name,last_name,phone,country\n"
    b"u1,ann@example.com,Ann,Lee,+44 7700 900123,GB\n"
    b"u2,,,,,US\n"
    b"u3,bob@example.com,Bob,Ray,,US\n"
)
PRODUCTS = b"product_id,name,category,price\np1,Mug,Kitchen,9.5\np2,Tea,Food,4\n"
ORDERS = (
    b"order_id,user_id,product_id,quantity,amount,timestamp\n"
    b"o1,u1,p1,1,9.5,2026-10-01T10:00:00\n"
    b"o2,u3,p2,2,8,2026-10-03T10:00:00\n"
    b"o3,u2,p2,1,4,2026-11-01T09:00:00\n"
)


def sync(world: DataSourceWorld, keys: dict[str, str], *, accept: bool = False) -> str:
    request = SyncRequest.model_validate({"files": keys, "acceptRejectedRows": accept})
    started = world.service.start_sync(ORG, request, world.start)
    world.service.run_sync(ORG, started.sync_id)
    return started.sync_id


def failed_file_error(world: DataSourceWorld) -> dict[str, str]:
    """The error of the latest sync, which must have failed on a whole file (field ``file``)."""
    latest = world.service.view(ORG).syncs[0]
    assert latest.state == "failed"
    assert latest.error is not None
    assert latest.error["field"] == "file"
    return latest.error


def test_a_clean_shop_is_stored_pending_training_and_in_force_once_its_purchase_model_is_trained(
    world: DataSourceWorld,
) -> None:
    # Given three valid files
    keys = world.put_files(CUSTOMERS, PRODUCTS, ORDERS)

    # When they are synced
    sync_id = sync(world, keys)

    # Then the background run was started, and a version is stored with the good rows counted, its
    # models pending, not yet in force (nothing was before it)
    assert world.started == [(sync_id, {"org_id": ORG, "sync_id": sync_id})]
    view = world.service.view(ORG)
    assert view.syncs[0].state == "synced"
    [stored] = view.versions
    assert stored.version == sync_id
    assert stored.row_counts == {"customers": 3, "products": 2, "orders": 3}
    assert stored.rejected_count == 0
    assert {kind: t.state for kind, t in stored.training.items()} == {
        "purchase": "pending",
        "recommendation": "pending",
    }
    assert view.current is None
    # And once its purchase model is trained it is the data in force
    world.train_purchase(sync_id)
    in_force = world.service.view(ORG).current
    assert in_force is not None
    assert in_force.version == sync_id


@pytest.mark.parametrize("read", ["list_syncs", "list_versions", "current"])
def test_a_purchase_training_that_ends_while_the_page_is_read_is_in_force_wherever_it_is_shown_trained(
    world: DataSourceWorld, monkeypatch: pytest.MonkeyPatch, read: str
) -> None:
    # Given a synced shop whose models finish training (the purchase model's putting the version in
    # force) just after one of the view's reads of the store
    sync_id = sync(world, world.put_files(CUSTOMERS, PRODUCTS, ORDERS))
    original = getattr(world.datasets, read)

    def then_training_ends(org_id: str) -> object:
        found = original(org_id)
        monkeypatch.setattr(world.datasets, read, original)
        _trained(world, sync_id)
        return found

    monkeypatch.setattr(world.datasets, read, then_training_ends)

    # When the page is read
    view = world.service.view(ORG)

    # Then an answer that lists the purchase model trained has the version in force (a poll that waits
    # for the training reads the data in force it made), and the version in force says what the list
    # says of it, in the same answer
    [listed] = view.versions
    if listed.training["purchase"].state == "succeeded":
        assert view.current is not None
        assert view.current.version == sync_id
    if view.current is not None:
        assert view.current.training == listed.training


@pytest.mark.parametrize("read", ["list_syncs", "current", "list_versions"])
def test_a_sync_that_ends_while_the_page_is_read_is_listed_wherever_it_is_shown_synced(
    world: DataSourceWorld, monkeypatch: pytest.MonkeyPatch, read: str
) -> None:
    # Given a sync started (validating), which ends just after one of the view's reads of the store
    request = SyncRequest.model_validate({"files": world.put_files(CUSTOMERS, PRODUCTS, ORDERS)})
    sync_id = world.service.start_sync(ORG, request, world.start).sync_id
    original = getattr(world.datasets, read)

    def then_the_sync_ends(org_id: str) -> object:
        found = original(org_id)
        monkeypatch.setattr(world.datasets, read, original)
        world.service.run_sync(ORG, sync_id)
        return found

    monkeypatch.setattr(world.datasets, read, then_the_sync_ends)

    # When the page is read
    view = world.service.view(ORG)

    # Then the sync did end during the read; an answer that shows it synced lists its version (a poll
    # that waits for "synced" may read the version it made), and the version in force, if any, is one
    # of the versions listed
    ended = world.datasets.get_sync(ORG, sync_id)
    assert ended is not None
    assert ended.state == "synced"
    [shown] = [s for s in view.syncs if s.sync_id == sync_id]
    if shown.state == "synced":
        assert sync_id in [v.version for v in view.versions]
    if view.current is not None:
        assert view.current.version in [v.version for v in view.versions]


def test_the_stored_dataset_is_encrypted_with_the_service_key(world: DataSourceWorld) -> None:
    # Given a synced shop
    sync(world, world.put_files(CUSTOMERS, PRODUCTS, ORDERS))
    version = world.datasets.latest(ORG)
    assert version is not None

    # Then each stored object is SSE-KMS
    s3 = boto3.client("s3", region_name="eu-west-1")
    for key in version.keys.values():
        assert s3.head_object(Bucket="data", Key=key)["ServerSideEncryption"] == "aws:kms"


def test_identifier_coverage_is_stored_after_normalisation(world: DataSourceWorld) -> None:
    # Given a synced shop where u2 has no identifier and u3 only an e-mail
    sync(world, world.put_files(CUSTOMERS, PRODUCTS, ORDERS))
    version = world.datasets.latest(ORG)
    assert version is not None

    # When its coverage is read
    coverage = read_coverage(world.blobs.get(version.keys["identifiers"]))

    # Then each flag says what survives normalisation, by sorted user id
    assert coverage.user_ids.tolist() == ["u1", "u2", "u3"]
    assert coverage.flags["usable"].tolist() == [True, False, True]
    assert coverage.flags["usable_phone"].tolist() == [True, False, False]
    assert coverage.flags["usable_name"].tolist() == [True, False, True]
    assert coverage.countries.tolist() == ["GB", "US", "US"]


def test_coverage_per_match_key_is_recorded_with_the_version_and_shown(world: DataSourceWorld) -> None:
    # Given customers with every match key in some rows, some of them unusable by the platform's rules
    customers = (
        b"user_id,email,first_name,last_name,phone,country,state,city,postcode,date_of_birth,gender,"
        b"external_id,madid\n"
        b"u1,ann@example.com,Ann,Lee,+44 7700 900123,United Kingdom,,London,SW1A 1AA,1980-02-03,F,"
        b"shop-1,6d92078a-8246-4ba4-ae5b-76104861e7dc\n"
        b"u2,not-an-email,,,,US,CA,Los Angeles,90210,,prefers not to say,,\n"
        b"u3,bob@example.com,Bob,Ray,12,US,,,,,,shop-3,\n"
    )

    # When they are synced
    sync(world, world.put_files(customers, PRODUCTS, ORDERS))

    # Then the version's data source view counts, per key, the customers who gave it and those whose
    # value the platform would take (an address that is no e-mail, a two-digit phone number and a gender
    # it cannot read as m or f are given, not usable)
    view = world.service.view(ORG)
    [stored] = view.versions
    coverage = {key: (c.given, c.usable) for key, c in stored.match_keys.items()}
    assert coverage == {
        "email": (3, 2),
        "phone": (2, 1),
        "first_name": (2, 2),
        "last_name": (2, 2),
        "city": (2, 2),
        "state": (1, 1),
        "postcode": (2, 2),
        "country": (3, 3),
        "date_of_birth": (1, 1),
        "gender": (2, 1),
        "external_id": (2, 2),
        "madid": (1, 1),
    }
    # And two of the three can be uploaded (u2 has neither a usable e-mail nor a phone)
    assert stored.matchable_customers == 2
    # And it is in the response body as the API sends it
    body = view.model_dump(by_alias=True)
    assert body["versions"][0]["matchKeys"]["email"] == {"given": 3, "usable": 2}
    assert body["versions"][0]["matchableCustomers"] == 2


def test_rejected_rows_wait_for_review_and_store_nothing(world: DataSourceWorld) -> None:
    # Given orders with a future date, an unknown customer and a bad quantity
    orders = ORDERS + (
        b"o4,u1,p1,1,9.5,2027-01-01T00:00:00\no5,u9,p1,1,9.5,2026-10-01T00:00:00\no6,u1,p1,0,1,2026-10-01T00:00:00\n"
    )
    keys = world.put_files(CUSTOMERS, PRODUCTS, orders)

    # When they are synced without accepting rejections
    sync(world, keys)

    # Then the sync waits in review, naming each bad row by file, line, column and reason
    view = world.service.view(ORG)
    assert view.current is None
    [review] = view.syncs
    assert review.state == "review"
    assert [(r.file, r.row, r.field, r.reason) for r in review.rejected_rows] == [
        ("orders.csv", 5, "timestamp", "is in the future"),
        ("orders.csv", 6, "user_id", "user is not in the customers file (or its row was rejected)"),
        ("orders.csv", 7, "quantity", "Input should be greater than or equal to 1"),
    ]
    assert review.rows_read == {"customers": 3, "products": 2, "orders": 6}


def test_accepting_the_report_keeps_the_good_rows(world: DataSourceWorld) -> None:
    # Given orders with one unknown customer, and a previous clean version in force
    world.train_purchase(sync(world, world.put_files(CUSTOMERS, PRODUCTS, ORDERS)))
    orders = ORDERS + b"o5,u9,p1,1,9.5,2026-10-01T00:00:00\n"

    # When the user syncs again accepting rejected rows, and its purchase model is trained
    sync_id = sync(world, world.put_files(CUSTOMERS, PRODUCTS, orders), accept=True)
    world.train_purchase(sync_id)

    # Then the new version holds the good rows, counts the rejected one, and the full report is stored
    view = world.service.view(ORG)
    assert view.current is not None
    assert view.current.version == sync_id
    assert view.current.row_counts["orders"] == 3
    assert view.current.rejected_count == 1
    assert view.current.rejected_rows_accepted
    assert len(view.versions) == 2
    version = world.datasets.current(ORG)
    assert version is not None
    report = json.loads(world.blobs.get(version.keys["report"]))
    assert report == [
        {
            "file": "orders.csv",
            "row": 5,
            "field": "user_id",
            "reason": "user is not in the customers file (or its row was rejected)",
        }
    ]


@pytest.mark.parametrize(
    ("customers", "field", "words"),
    [
        (b"email,country\nann@example.com,GB\n", "user_id", "has no user_id column in its header row"),
        (
            b"user_id,email,loyalty_tier\nu1,a@example.com,gold\n",
            "loyalty_tier",
            "unknown column(s) loyalty_tier",
        ),
        (b"user_id,email\n", "file", "has no records"),
        ("user_id,first_name\nu1,Zoë\n".encode("latin-1"), "file", "is not UTF-8 text"),
    ],
    ids=["missing column", "unknown column", "no records", "wrong encoding"],
)
def test_a_file_level_problem_fails_the_sync_and_the_previous_dataset_stays(
    world: DataSourceWorld, customers: bytes, field: str, words: str
) -> None:
    # Given a dataset in force
    first = sync(world, world.put_files(CUSTOMERS, PRODUCTS, ORDERS))
    world.train_purchase(first)

    # When a customers file with a whole-file problem is synced
    sync(world, world.put_files(customers, PRODUCTS, ORDERS))

    # Then the sync failed naming the file and the header, and the old version is still current
    view = world.service.view(ORG)
    latest = view.syncs[0]
    assert latest.state == "failed"
    assert latest.error is not None
    assert latest.error["field"] == field
    assert words in latest.error["message"]
    assert "customers.csv" in latest.error["message"]
    assert view.current is not None
    assert view.current.version == first


@pytest.mark.parametrize(
    ("orders", "words"),
    [
        (
            b"order_id,user_id,product_id,quantity,amount,timestamp" + b",c" * 1_000_000 + b"\n",
            "at line 1 (its header has 1,000,006 columns; the limit is 1,000)",
        ),
        (b"x" * 3_000_000, "at line 1 (line 1 is longer than 2,097,152 bytes, the limit for one line)"),
        (
            ORDERS + b"o9," + b"x" * 3_000_000 + b",p1,1,1.0,2024-01-01T00:00:00Z\n",
            "(line 5 is longer than 2,097,152 bytes, the limit for one line)",
        ),
    ],
    ids=["a million columns", "one enormous line", "an enormous record"],
)
def test_a_hostile_orders_file_fails_the_sync_naming_the_file_and_the_limit(
    world: DataSourceWorld, orders: bytes, words: str
) -> None:
    # When an orders file with a header of a million columns, or a line over the limit, is synced
    sync(world, world.put_files(CUSTOMERS, PRODUCTS, orders))
    # Then the sync fails at once naming the file, the line and the limit
    error = failed_file_error(world)
    assert "orders.csv is not readable CSV" in error["message"]
    assert words in error["message"]


@pytest.mark.parametrize(
    ("customers", "what", "remedy"),
    [
        (gzip_bomb(256), "a compressed file (gz)", "Decompress it"),
        (WORKBOOK, "an Excel workbook (.xlsx)", "save it as CSV UTF-8"),
        (CUSTOMERS.decode().encode("utf-16-le"), "UTF-16 text", "in UTF-8"),
        (bytes(100_000), "binary data (it holds NUL bytes)", "Export the data as CSV"),
    ],
    ids=["a gzip bomb (256 MiB of zeros)", "an Excel workbook", "UTF-16 without a byte-order mark", "zeros"],
)
def test_a_file_that_is_not_text_fails_the_sync_saying_what_it_is(
    world: DataSourceWorld, customers: bytes, what: str, remedy: str
) -> None:
    # When the customers slot holds a compressed file, a workbook or binary data
    sync(world, world.put_files(customers, PRODUCTS, ORDERS))
    # Then the sync fails from the file's first bytes (nothing is decompressed), saying what it is
    error = failed_file_error(world)
    assert error["message"] == (
        f"customers.csv is {what}: the service reads UTF-8 CSV, JSON Lines or Parquet files only."
    )
    assert remedy in error["remedy"]


def test_duplicate_customers_are_rejected_rows(world: DataSourceWorld) -> None:
    # Given a customers file naming u1 twice
    customers = CUSTOMERS + b"u1,other@example.com,,,,GB\n"

    # When synced
    sync(world, world.put_files(customers, PRODUCTS, ORDERS))

    # Then the second u1 is rejected by line
    [review] = world.service.view(ORG).syncs
    assert [(r.row, r.field) for r in review.rejected_rows] == [(5, "user_id")]
    assert "duplicate" in review.rejected_rows[0].reason


def test_a_file_over_the_size_cap_is_refused_before_anything_starts(world: DataSourceWorld) -> None:
    # Given an orders file larger than the cap
    keys = world.put_files(CUSTOMERS, PRODUCTS, ORDERS)
    world.blobs.put(keys["orders"], ORDERS + b"x" * 10_000_001)

    # When a sync is requested, then it is refused with the size and the limit, and nothing started
    with pytest.raises(ValidationFailed, match="limit is 10,000,000") as raised:
        world.service.start_sync(ORG, SyncRequest.model_validate({"files": keys}), world.start)
    assert raised.value.field == "orders"
    assert world.started == []


def test_a_header_whose_names_are_quoted_after_spaces_is_read_by_its_names(world: DataSourceWorld) -> None:
    # Given a customers file whose header a tool wrote "user_id", "email", ... (a space after each comma)
    header, rows = CUSTOMERS.split(b"\n", 1)
    spaced = b", ".join(b'"' + cell + b'"' for cell in header.split(b",")) + b"\n" + rows

    # When it is synced with the other two files
    sync(world, world.put_files(spaced, PRODUCTS, ORDERS))

    # Then its columns are the service's, every customer kept
    [stored] = world.service.view(ORG).versions
    assert stored.row_counts["customers"] == 3
    assert stored.rejected_count == 0


def test_a_missing_upload_is_named(world: DataSourceWorld) -> None:
    # Given upload links whose files were never PUT
    links = world.service.upload_links(ORG, UploadLinksRequest())

    # When the upload is synced, then the missing file is named
    with pytest.raises(NotFound, match="customers file was not found"):
        world.service.start_sync(ORG, SyncRequest(upload_id=links.upload_id), world.start)


def test_an_upload_synced_without_its_format_is_synced_in_the_format_its_files_were_sent(
    world: DataSourceWorld,
) -> None:
    # Given links made for JSON Lines files, the files sent to them
    links = world.service.upload_links(ORG, UploadLinksRequest(format="jsonl"))
    for link in links.files:
        world.blobs.put(link.key, b'{"user_id": "u1"}\n')

    # When the upload is synced without naming a format
    started = world.service.start_sync(ORG, SyncRequest(upload_id=links.upload_id), world.start)

    # Then the sync reads the JSON Lines files the upload holds
    assert world.started == [(started.sync_id, {"org_id": ORG, "sync_id": started.sync_id})]
    [record] = world.service.datasets.list_syncs(ORG)
    assert record.keys == {link.kind: link.key for link in links.files}
    assert all(key.endswith(".jsonl") for key in record.keys.values())


def test_an_upload_synced_as_another_format_says_which_format_to_send(world: DataSourceWorld) -> None:
    # Given links made for JSON Lines files, the files sent to them
    links = world.service.upload_links(ORG, UploadLinksRequest(format="jsonl"))
    for link in links.files:
        world.blobs.put(link.key, b'{"user_id": "u1"}\n')

    # When the upload is synced as CSV files
    with pytest.raises(ValidationFailed) as refused:
        world.service.start_sync(ORG, SyncRequest(upload_id=links.upload_id, format="csv"), world.start)

    # Then the refusal names the format to send, not a missing file
    assert refused.value.field == "format"
    assert refused.value.message == "The upload holds customers.jsonl, but the sync asks for csv files."
    assert refused.value.remedy == (
        'Send "format": "jsonl" with the sync, as with the upload links, or leave it out: the sync then '
        "reads the upload's files as they were sent."
    )
    assert world.started == []


def test_files_outside_the_organizations_prefix_are_refused(world: DataSourceWorld) -> None:
    keys = {kind: f"data-sources/other-shop/{kind}.csv" for kind in ("customers", "products", "orders")}
    with pytest.raises(ValidationFailed, match="must name an object under data-sources/shop-1/"):
        world.service.start_sync(ORG, SyncRequest.model_validate({"files": keys}), world.start)


def test_values_never_appear_in_the_report(world: DataSourceWorld) -> None:
    # Given a customer with an invalid country beside a real e-mail
    customers = CUSTOMERS + b"u4,zed@example.com,,,,Narnia\n"
    sync(world, world.put_files(customers, PRODUCTS, ORDERS))
    [review] = world.service.view(ORG).syncs
    assert "zed@" not in review.model_dump_json()
    assert "Narnia" not in review.model_dump_json()


def test_the_requested_horizon_is_kept_for_the_training_that_follows(world: DataSourceWorld) -> None:
    # Given a sync asking for a 14-day prediction horizon
    request = SyncRequest.model_validate(
        {"files": world.put_files(CUSTOMERS, PRODUCTS, ORDERS), "horizonDays": 14}
    )

    # When it is started and run
    started = world.service.start_sync(ORG, request, world.start)
    ended = world.service.run_sync(ORG, started.sync_id)

    # Then the sync carries the horizon the state machine hands to both training jobs
    assert started.horizon_days == 14
    assert ended.state == "synced"
    assert ended.horizon_days == 14


@pytest.mark.parametrize("days", [3, 400])
def test_a_horizon_outside_the_trainable_range_is_refused_at_the_request(days: int) -> None:
    with pytest.raises(ValueError, match="horizonDays"):
        SyncRequest.model_validate({"uploadId": "u", "horizonDays": days})


def _trained(world: DataSourceWorld, version: str) -> None:
    """Both models of ``version`` finished training, as the training jobs record it (the purchase
    model's puts the version in force)."""
    for model_type, name in (("purchase", "shop-purchase"), ("recommendation", "shop-recommendations")):
        world.datasets.record_training(
            ORG,
            version,
            model_type,
            ModelTraining(model_name=name, state="succeeded", updated_at=datetime(2026, 11, 22, tzinfo=UTC)),
            publish=model_type == "purchase",
        )


def test_retraining_syncs_the_current_data_again_with_its_horizon(world: DataSourceWorld) -> None:
    # Given a shop synced for a 14-day horizon, both models trained
    request = SyncRequest.model_validate(
        {"files": world.put_files(CUSTOMERS, PRODUCTS, ORDERS), "horizonDays": 14}
    )
    first = world.service.start_sync(ORG, request, world.start)
    world.service.run_sync(ORG, first.sync_id)
    _trained(world, first.sync_id)

    # When a retrain is asked for
    started = world.service.retrain(ORG, world.start)
    ended = world.service.run_sync(ORG, started.sync_id)

    # Then the state machine ran a sync of the stored files, which became a new version of the same
    # rows, pending training for the same horizon; the first stays in force until it is trained
    assert world.started[-1] == (started.sync_id, {"org_id": ORG, "sync_id": started.sync_id})
    assert (ended.state, ended.horizon_days, ended.dataset_version) == ("synced", 14, started.sync_id)
    view = world.service.view(ORG)
    newest = view.versions[0]
    assert newest.version == started.sync_id != first.sync_id
    assert newest.row_counts == {"customers": 3, "products": 2, "orders": 3}
    assert {t.state for t in newest.training.values()} == {"pending"}
    assert view.current is not None
    assert view.current.version == first.sync_id


def test_retraining_before_any_sync_says_to_sync_first(world: DataSourceWorld) -> None:
    with pytest.raises(NotFound) as raised:
        world.service.retrain(ORG, world.start)
    assert raised.value.remedy is not None
    assert "Sync the shop's customers, products and orders first" in raised.value.remedy
    assert world.started == []


def test_retraining_while_a_training_runs_is_refused_with_what_to_do(world: DataSourceWorld) -> None:
    # Given a synced shop whose models have not finished training
    sync(world, world.put_files(CUSTOMERS, PRODUCTS, ORDERS))
    started_before = len(world.started)

    # When / Then
    with pytest.raises(Conflict) as raised:
        world.service.retrain(ORG, world.start)
    assert "shop-purchase" in raised.value.message
    assert raised.value.remedy is not None
    assert raised.value.remedy.startswith("Wait for it to finish")
    assert len(world.started) == started_before


def test_the_sync_opens_its_engine_with_the_services_fixed_limit(
    world: DataSourceWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a service whose engine limit is fixed (the sync job's configuration), and the engine's
    # sessions recorded
    from shared.dataplane import engine

    opened: list[int | None] = []
    session = engine.session

    def recorded(*args: Any, **kwargs: Any) -> Any:
        opened.append(kwargs.get("memory_limit_mb"))
        return session(*args, **kwargs)

    monkeypatch.setattr(engine, "session", recorded)
    service = replace(world.service, engine_memory_mb=300)

    # When a shop is synced
    request = SyncRequest.model_validate({"files": world.put_files(CUSTOMERS, PRODUCTS, ORDERS)})
    started = service.start_sync(ORG, request, world.start)
    assert service.run_sync(ORG, started.sync_id).state == "synced"

    # Then its engine was opened with that limit, not a share of the function's memory
    assert opened == [300]


def test_a_field_quoted_after_a_space_or_followed_by_spaces_is_synced_as_meant(
    world: DataSourceWorld,
) -> None:
    # Given a customers file with an email quoted after a space (, "bob@example.com") and an orders
    # file with spaces after a closing quote ("p2"  ,): DuckDB reads both as the writer meant
    customers = CUSTOMERS.replace(b"u3,bob@example.com", b'u3, "bob@example.com"')
    orders = ORDERS.replace(b"o2,u3,p2,", b'o2,u3,"p2"  ,')
    # When they are synced
    sync(world, world.put_files(customers, PRODUCTS, orders))
    # Then every row is good: the email is an email, the order's product p2 (they were refused)
    view = world.service.view(ORG)
    assert view.syncs[0].state == "synced"
    assert view.versions[0].row_counts == {"customers": 3, "products": 2, "orders": 3}
    assert view.versions[0].rejected_count == 0


_TEXT_AFTER = "text follows the quote that closes a quoted field."
_AFTER_SPACE = "a field starts with a space and then a quote."


@pytest.mark.parametrize(
    ("customers", "orders", "words"),
    [
        (
            CUSTOMERS.replace(b"u3,bob@example.com", b'u3,"bob"@example.com'),
            ORDERS,
            "customers.csv has a quote at line 4 (byte 113) that CSV readers read differently: "
            + _TEXT_AFTER,
        ),
        (
            CUSTOMERS,
            ORDERS.replace(b"o2,u3,p2,2,8,", b'o2,u3,p2,2,"8"0"x,'),
            "orders.csv has a quote at line 3 (byte 103) that CSV readers read differently: " + _TEXT_AFTER,
        ),
        (
            CUSTOMERS,
            ORDERS.replace(b"o3,u2,p2,", b'o3,u2, "p2\n",'),
            "orders.csv has a quote at line 4 (byte 130) that CSV readers read differently: " + _AFTER_SPACE,
        ),
        (
            CUSTOMERS.replace(b",", b";")
            .replace(b"\n", b"\r\n")
            .replace(b"u3;bob@example.com", b'u3;"bob"@example.com'),
            ORDERS.replace(b",", b";"),
            "customers.csv has a quote at line 4 (byte 116) that CSV readers read differently: "
            + _TEXT_AFTER,
        ),
    ],
    ids=[
        "text after a closing quote",
        "a record run on into the next",
        "a quote after one space",
        "semicolons",
    ],
)
def test_a_quote_the_engine_reads_otherwise_than_csv_fails_the_sync_naming_its_line_and_byte(
    world: DataSourceWorld, customers: bytes, orders: bytes, words: str
) -> None:
    # Given a shop file with a quote the engine reads otherwise than Python's csv module (and a
    # spreadsheet): "bob"@example.com (read bob@example.co), "8"0"x (the next record swallowed),
    # ' "p2' (a quoted field opened after a space, the line break inside it: two records read as one)
    # When it is synced
    sync(world, world.put_files(customers, PRODUCTS, orders))
    # Then the sync fails naming the file, the line, the byte and the cause, and how to quote the field
    error = failed_file_error(world)
    assert words in error["message"]
    assert "quote the whole field" in error["remedy"]
    assert ("remove the space before the quote" in error["remedy"]) == words.endswith(_AFTER_SPACE)
