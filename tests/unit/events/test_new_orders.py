"""The engine's new-order queries on edge rows (shared/dataplane/queries/event_*.sql): which orders are
new, which are in the window, how they are numbered and read back a range at a time."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from shared.dataplane.engine import Workspace, session
from shared.events.orders import load_new_orders, order_chunks

CUTOFF = datetime(2026, 11, 20, 12, 0)


def write(workspace: Workspace, name: str, rows: list[tuple[str, str, str, int, float, datetime]]) -> Path:
    path = workspace.path(name)
    workspace.connection.execute(
        "CREATE OR REPLACE TABLE w (order_id VARCHAR, user_id VARCHAR, product_id VARCHAR, quantity INTEGER, "
        'amount DOUBLE, "timestamp" TIMESTAMP)'
    )
    workspace.connection.executemany("INSERT INTO w VALUES (?, ?, ?, ?, ?, ?)", rows)
    workspace.connection.execute("COPY w TO $path (FORMAT parquet)", {"path": str(path)})
    return path


def customers(workspace: Workspace) -> Path:
    path = workspace.path("customers.parquet")
    workspace.connection.execute(
        "COPY (SELECT * FROM (VALUES ('u1', 'a@b.co', NULL, 'Ann', NULL, 'GB', NULL, CAST(NULL AS BOOLEAN)), "
        "('u2', NULL, '+15555550100', NULL, NULL, 'US', 'CA', true)) "
        "AS t(user_id, email, phone, first_name, last_name, country, state, limited_data_use)) "
        "TO $path (FORMAT parquet)",
        {"path": str(path)},
    )
    return path


def test_new_orders_are_those_not_sent_numbered_in_time_then_id_order_from_the_cutoff() -> None:
    with session(function_mb=512, threads=1) as workspace:
        sent = write(workspace, "sent.parquet", [("a", "u1", "p", 1, 1.0, datetime(2026, 11, 21))])
        orders = write(
            workspace,
            "orders.parquet",
            [
                ("a", "u1", "p", 1, 1.0, datetime(2026, 11, 21)),  # sent with the previous version
                ("old", "u1", "p", 1, 2.0, datetime(2026, 11, 20, 11, 59, 59)),  # a second before the cutoff
                ("edge", "u2", "p", 1, 3.0, CUTOFF),  # at the cutoff: in
                ("y", "u1", "p", 1, 4.0, datetime(2026, 11, 22)),
                ("x", "u2", "q", 2, 5.0, datetime(2026, 11, 22)),  # same time as y: x first
                ("x", "u2", "p", 1, 1.5, datetime(2026, 11, 23)),  # a later line of x: x keeps its first time
            ],
        )
        found = load_new_orders(
            workspace, orders=orders, customers_file=customers(workspace), sent_orders=sent, cutoff=CUTOFF
        )
        chunks = list(order_chunks(workspace, 0, found.in_window, 2))
    assert (found.total, found.in_window, found.too_old) == (4, 3, 1)
    assert [chunk.order_ids for chunk in chunks] == [["edge", "x"], ["y"]]
    x = chunks[0]
    assert x.values == [3.0, 6.5]
    assert [[(c.product_id, c.quantity, c.item_price) for c in items] for items in x.contents] == [
        [("p", 1, 3.0)],
        [("p", 1, 1.5), ("q", 2, 2.5)],
    ]
    assert x.ordered_at == [
        int((CUTOFF - datetime(1970, 1, 1)).total_seconds()),
        int((datetime(2026, 11, 22) - datetime(1970, 1, 1)).total_seconds()),
    ]
    assert x.identifiers.emails == [None, None]
    assert x.identifiers.phones == ["+15555550100", "+15555550100"]
    assert x.identifiers.limited_data_use == [True, True]
    assert chunks[1].identifiers.limited_data_use is None


def test_without_a_version_sent_every_order_is_new_and_a_resumed_range_reads_the_same_orders() -> None:
    rows = [(f"o{i:02}", "u1", "p", 1, float(i), datetime(2026, 11, 21, 0, i)) for i in range(10)]
    with session(function_mb=512, threads=1) as workspace:
        orders = write(workspace, "orders.parquet", rows)
        found = load_new_orders(
            workspace, orders=orders, customers_file=customers(workspace), sent_orders=None, cutoff=CUTOFF
        )
        whole = [
            order for chunk in order_chunks(workspace, 0, found.in_window, 4) for order in chunk.order_ids
        ]
        resumed = [
            order for chunk in order_chunks(workspace, 6, found.in_window, 4) for order in chunk.order_ids
        ]
    assert whole == [f"o{i:02}" for i in range(10)]
    assert resumed == whole[6:]
