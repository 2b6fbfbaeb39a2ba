"""The shop files ``make dev`` writes for the launch wizard: they sync without a rejected row and hold
enough GB customers for a prospecting lookalike's seed with room to spare."""

from __future__ import annotations

from pathlib import Path

from local.seed import write_shop_files
from shared.clock import utc_now
from shared.ml.validation import validate_shop_files


def test_the_demo_shop_files_sync_whole_and_seed_a_gb_lookalike(tmp_path: Path) -> None:
    # When
    paths = write_shop_files(tmp_path / "demo-shop")

    # Then: the three files the wizard asks for, valid row for row
    assert [p.name for p in paths] == ["customers.csv", "products.csv", "orders.csv"]
    files = {p.stem: p.read_bytes() for p in paths}
    validation = validate_shop_files(**files, names={kind: f"{kind}.csv" for kind in files}, now=utc_now())
    assert validation.rejected == []
    # And: GB customers are at least three times a lookalike's 100-person seed, so the wizard's
    # default segment (the top half of scores) can seed one (78 of the top fifth did, measured)
    header, *rows = files["customers"].decode().splitlines()
    at = header.split(",").index("country")
    assert sum(row.split(",")[at] == "GB" for row in rows) >= 300
