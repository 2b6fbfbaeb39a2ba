"""Batching rows into one restartable upload session."""

import pytest

from shared.audiences.batching import batch_at, iter_batches, new_session_id, new_upload_session
from shared.audiences.identifiers import SCHEMA
from shared.errors import ValidationFailed
from shared.platform.audiences import MAX_ROWS_PER_CALL, UploadSession, upload_request


def _rows(count: int) -> list[tuple[str, ...]]:
    return [(f"u{index}", f"{index:064x}", "", "", "", "") for index in range(count)]


def test_batches_hold_at_most_ten_thousand_rows() -> None:
    # Given
    rows = _rows(25_001)
    session = new_upload_session(len(rows))

    # When
    batches = list(iter_batches(rows, session))

    # Then
    assert [len(batch.rows) for batch in batches] == [10_000, 10_000, 5_001]
    assert MAX_ROWS_PER_CALL == 10_000


def test_batches_are_numbered_from_one_and_only_the_last_is_flagged() -> None:
    # Given
    rows = _rows(7)
    session = new_upload_session(len(rows), batch_size=3)

    # When
    batches = list(iter_batches(rows, session))

    # Then
    assert [(batch.batch_seq, batch.last_batch_flag) for batch in batches] == [
        (1, False),
        (2, False),
        (3, True),
    ]
    assert {batch.session_id for batch in batches} == {session.session_id}
    assert {batch.estimated_num_total for batch in batches} == {7}


def test_resuming_after_an_acknowledged_batch_sends_each_row_exactly_once() -> None:
    # Given an upload that stopped after batch 2 was acknowledged and batch 3 failed
    rows = _rows(10)
    session = new_upload_session(len(rows), batch_size=3)
    sent_before = [row for batch in list(iter_batches(rows, session))[:2] for row in batch.rows]

    # When it resumes from the last acknowledged batch
    resumed = list(iter_batches(rows, session, after_batch_seq=2))

    # Then the failed batch comes again with the same number, and nobody is lost or duplicated
    assert [batch.batch_seq for batch in resumed] == [3, 4]
    assert sent_before + [row for batch in resumed for row in batch.rows] == rows


def test_a_retried_batch_has_the_same_rows_and_sequence() -> None:
    # Given
    rows = _rows(10)
    session = new_upload_session(len(rows), batch_size=4)

    # When the same batch is built twice
    first, again = batch_at(rows, session, 2), batch_at(rows, session, 2)

    # Then
    assert first == again
    assert first.rows == rows[4:8]


def test_session_id_is_a_positive_int64_even_for_zero_random_bits() -> None:
    assert new_session_id(lambda bits: 0) == 1
    assert new_session_id(lambda bits: 2**bits - 1) == 2**62
    assert 0 < new_session_id() <= 2**63 - 1


def test_resuming_with_different_rows_is_refused() -> None:
    # Given a session made for 10 rows
    session = new_upload_session(10, batch_size=3)

    # When / Then
    with pytest.raises(ValidationFailed) as raised:
        list(iter_batches(_rows(9), session))
    assert raised.value.field == "rows"


def test_resume_point_outside_the_session_is_refused() -> None:
    session = new_upload_session(10, batch_size=3)
    with pytest.raises(ValidationFailed):
        list(iter_batches(_rows(10), session, after_batch_seq=5))


def test_empty_audience_has_no_batches() -> None:
    session = new_upload_session(0)
    assert session.total_batches == 0
    assert list(iter_batches([], session)) == []


def test_batch_size_above_the_platform_limit_is_refused() -> None:
    with pytest.raises(ValueError, match="less than or equal to 10000"):
        UploadSession(session_id=1, total_rows=1, batch_size=10_001)


def test_request_params_follow_the_platform_shapes() -> None:
    # Given
    rows = _rows(2)
    batch = batch_at(rows, UploadSession(session_id=9778993, total_rows=2), 1)

    # When
    request = upload_request(SCHEMA, batch)
    session, payload = request["session"], request["payload"]

    # Then
    assert session == {
        "session_id": 9778993,
        "batch_seq": 1,
        "last_batch_flag": True,
        "estimated_num_total": 2,
    }
    assert payload["schema"] == ["EXTERN_ID", "EMAIL", "PHONE", "FN", "LN", "COUNTRY"]
    assert payload["is_raw"] is True
    assert payload["data"] == [list(row) for row in rows]
