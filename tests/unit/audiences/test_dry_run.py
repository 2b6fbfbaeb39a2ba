"""The dry-run command: quality report and the exact requests an upload would send."""

import json
from pathlib import Path

import httpx
import pytest

from shared.audiences.batching import iter_batches
from shared.audiences.preparation import prepare_audience
from shared.audiences.uploads import read_users
from shared.platform.audiences import UploadSession, add_users
from shared.platform.client import GraphClient
from tests.unit.platform.fake_graph import ACCESS_TOKEN, APP_ID, APP_SECRET, GRAPH_URL, VERSION, FakeGraph
from tools.dry_run import main

MARY_SHA256 = "f1904cf1a9d73a55fa5de0ac823c4403ded71afd4c3248d00bdcd0866552bb79"
UK_PHONE_SHA256 = "033134b911b137918338415ee3d20a064b24773d36a3b02e8b99fdd3fcd6b4cd"  # of 447700900123

CSV_TEXT = (
    "user_id,email,firstName,lastName,phone,score\n"
    "u1, Mary@Example.com ,Mary,Major,07700 900123,0.9\n"
    "u2,not-an-email,,,,0.5\n"
    "u3,c@example.com,,,,-0.1\n"
)


@pytest.fixture
def users_csv(tmp_path: Path) -> Path:
    path = tmp_path / "users.csv"
    path.write_text(CSV_TEXT, encoding="utf-8")
    return path


def test_dry_run_prints_the_quality_report(users_csv: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Given / When
    status = main([str(users_csv), "--country", "GB"])

    # Then
    report = json.loads(capsys.readouterr().out)
    assert status == 0
    assert report["total_records"] == 3
    assert report["rows_to_upload"] == 2
    assert report["identifiers"]["EMAIL"]["unusable_reasons"] == {"invalid_email": 1}


def test_dry_run_writes_the_requests_an_upload_would_send(users_csv: Path, tmp_path: Path) -> None:
    # Given
    out = tmp_path / "rows.jsonl"

    # When
    status = main([str(users_csv), "--country", "GB", "--out", str(out), "--batch-size", "1"])

    # Then one request per batch, with session and hashed payload
    requests = [json.loads(line) for line in out.read_text().splitlines()]
    assert status == 0
    assert [request["session"]["batch_seq"] for request in requests] == [1, 2]
    assert [request["session"]["last_batch_flag"] for request in requests] == [False, True]
    assert requests[0]["payload"]["schema"] == ["EXTERN_ID", "EMAIL", "PHONE", "FN", "LN", "COUNTRY"]
    assert requests[0]["payload"]["data"][0][:3] == ["u1", MARY_SHA256, UK_PHONE_SHA256]


def test_dry_run_rejects_rows_without_quoting_their_values(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a row without user_id and with a score that is not a number
    path = tmp_path / "bad.csv"
    path.write_text("user_id,email,score\n,mary@example.com,high\n", encoding="utf-8")

    # When
    status = main([str(path)])

    # Then the problems name line and field, not the values
    errors = capsys.readouterr().err
    assert status == 2
    assert "line 2: user_id" in errors
    assert "line 2: score" in errors
    assert "mary@example.com" not in errors
    assert "high" not in errors


def test_each_line_is_exactly_the_request_the_upload_sends(users_csv: Path, tmp_path: Path) -> None:
    # Given the dry run's requests for a file, one row per batch
    out = tmp_path / "rows.jsonl"
    assert main([str(users_csv), "--country", "GB", "--out", str(out), "--batch-size", "1"]) == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]

    # When the upload sends the same rows in the same session to the platform
    with users_csv.open(encoding="utf-8") as text:
        prepared = prepare_audience(read_users(text), default_country="GB")
    session = UploadSession(
        session_id=lines[0]["session"]["session_id"], total_rows=len(prepared.rows), batch_size=1
    )
    platform = FakeGraph()
    graph = GraphClient(
        base_url=GRAPH_URL,
        version=VERSION,
        app_id=APP_ID,
        app_secret=APP_SECRET,
        access_token=ACCESS_TOKEN,
        transport=httpx.MockTransport(platform),
    )
    for batch in iter_batches(prepared.rows, session):
        platform.reply({"num_received": batch.batch_seq, "num_invalid_entries": 0})
        add_users(graph, "238", prepared.schema, batch)

    # Then each request carries exactly the session and payload of its dry-run line
    sent = [
        {key: platform.json_body(index)[key] for key in ("session", "payload")}
        for index in range(len(platform.requests))
    ]
    assert len(sent) == 2
    assert sent == lines
