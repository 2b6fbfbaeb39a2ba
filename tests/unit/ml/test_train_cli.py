from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from shared.ml.datasets import dump_records
from tools.synthetic import SyntheticShop
from tools.train import LocalDirectoryStore, main


def test_cli_trains_from_files_and_writes_verifiable_artifacts(
    shop: SyntheticShop, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given the shop exported as CSV and JSON Lines files
    (tmp_path / "orders.csv").write_bytes(dump_records(shop.data.orders, "csv"))
    (tmp_path / "customers.jsonl").write_bytes(dump_records(shop.data.customers, "jsonl"))
    (tmp_path / "products.csv").write_bytes(dump_records(shop.data.products, "csv"))

    # When the CLI trains from them
    status = main(
        [
            "--orders", str(tmp_path / "orders.csv"), "--customers", str(tmp_path / "customers.jsonl"),
            "--products", str(tmp_path / "products.csv"), "--name", "cli", "--out", str(tmp_path / "out"),
        ]
    )  # fmt: skip

    # Then it succeeds, prints metrics, and the metadata's checksum matches the written bundle
    assert status == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["metrics"]["roc_auc"] > 0.7
    metadata = json.loads((tmp_path / "out" / printed["keys"]["metadata"]).read_text())
    bundle = (tmp_path / "out" / printed["keys"]["bundle"]).read_bytes()
    assert metadata["artifacts"]["bundle"]["sha256"] == hashlib.sha256(bundle).hexdigest()


def test_cli_reports_invalid_files_with_exit_status_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given an orders file with a bad row
    orders = tmp_path / "orders.csv"
    orders.write_text("order_id,user_id,product_id,quantity,amount,timestamp\no1,u1,p1,zero,1,2024-01-01\n")

    # When the CLI runs
    status = main(["--orders", str(orders), "--name", "bad", "--out", str(tmp_path / "out")])

    # Then it explains the problem instead of training
    assert status == 2
    assert "row 2 quantity" in capsys.readouterr().err


def test_local_store_refuses_keys_outside_its_root(tmp_path: Path) -> None:
    # Given a store rooted in a directory
    store = LocalDirectoryStore(tmp_path / "root")

    # Then a key climbing out of it is refused
    with pytest.raises(ValueError, match="escapes"):
        store.put("../elsewhere.bin", b"x")


def test_cli_reads_three_files_through_the_data_plane_and_names_a_bad_row(
    shop: SyntheticShop, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given the shop's three files, one order line with a quantity of zero
    orders = dump_records(shop.data.orders, "csv").decode().splitlines()
    cells = orders[5].split(",")
    cells[3] = "0"
    orders[5] = ",".join(cells)
    (tmp_path / "orders.csv").write_text("\n".join(orders) + "\n")
    (tmp_path / "customers.csv").write_bytes(dump_records(shop.data.customers, "csv"))
    (tmp_path / "products.csv").write_bytes(dump_records(shop.data.products, "csv"))

    # When the CLI runs on them
    status = main(
        [
            "--orders", str(tmp_path / "orders.csv"), "--customers", str(tmp_path / "customers.csv"),
            "--products", str(tmp_path / "products.csv"), "--name", "bad", "--out", str(tmp_path / "out"),
        ]
    )  # fmt: skip

    # Then it names the file, the row and the column, and trains nothing
    assert status == 2
    assert "orders.csv row 6 quantity" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
