"""An audience's CSV snapshot opened in a real spreadsheet program, LibreOffice Calc (issue 23, item 5):
no cell runs as a formula, and phones and names show as the merchant wrote them."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from local.connected import ConnectedOrg
from tests.integration.spreadsheet import open_in_calc
from tests.integration.test_audiences import created_in_full

pytestmark = pytest.mark.integration

USERS = [
    # (user_id, email, firstName, lastName, phone)
    ("u1", "zoe@example.com", "Zoë", "Łukasiewicz", "+44 7700 900065"),
    ("u2", "mary@example.com", '=HYPERLINK("http://evil.example","Click")', "=1+1", "+1 (555) 010-0199"),
    ("u3", "jose@example.com", "-Mary", "@SUM(1)", "07700 900123"),
    ("u4", "ann@example.com", "José", "O'Brien", "+33 1 23 45 67 89"),
]


def test_a_snapshot_opened_in_calc_runs_nothing_and_shows_phones_and_names_as_written(
    api: httpx.Client, org: ConnectedOrg, tmp_path: Path
) -> None:
    # Given: an audience whose users have accented names, formula-looking names and phones
    users = [
        dict(zip(("user_id", "email", "firstName", "lastName", "phone"), user, strict=True)) | {"score": 0.9}
        for user in USERS
    ]
    request = {"name": "Spreadsheet check", "productId": "sku-1", "modelId": "purchase", "users": users}
    audience = created_in_full(
        api, org, api.post("/platform-ads/audiences", json=request, headers=org.headers)
    )

    # When: its snapshot is downloaded and opened in LibreOffice Calc
    link = api.get(f"/platform-ads/audiences/{audience['audienceId']}/snapshot", headers=org.headers).json()
    rows = open_in_calc(httpx.get(link["url"]).content, tmp_path)

    # Then: Calc made no formula of any cell, even with "Evaluate formulas" on
    assert [cell.formula for row in rows for cell in row if cell.formula] == []
    # And it shows the header, every phone and every ordinary name exactly as written (accents too)
    shown = [[cell.shown for cell in row] for row in rows]
    assert shown[0] == ["user_id", "email", "firstName", "lastName", "phone", "score"]
    by_id = {row[0]: row for row in shown[1:]}
    for user_id, email, *_, phone in USERS:
        assert by_id[user_id][1] == email
        assert by_id[user_id][4] == phone
    assert by_id["u1"][2:4] == ["Zoë", "Łukasiewicz"]
    assert by_id["u4"][2:4] == ["José", "O'Brien"]
    # And a cell that would run shows as text, marked with a leading apostrophe
    assert by_id["u2"][2:4] == ["'" + USERS[1][2], "'=1+1"]
    assert by_id["u3"][2:4] == ["'-Mary", "'@SUM(1)"]
    # And the score is a number Calc can sum
    assert {row[5].kind for row in rows[1:]} == {"float"}
