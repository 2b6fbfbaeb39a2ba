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


def test_the_orders_of_a_customer_who_refused_marketing_are_never_numbered_and_are_counted_apart() -> None:
    with session(function_mb=512, threads=1) as workspace:
        # Given three customers: one who refused marketing, one who agreed, one not flagged
        flagged = workspace.path("customers.parquet")
        workspace.connection.execute(
            "COPY (SELECT * FROM (VALUES ('no', 'n@b.co', false), ('yes', 'y@b.co', true), "
            "('blank', 'b@b.co', CAST(NULL AS BOOLEAN))) AS t(user_id, email, marketing_consent)) "
            "TO $path (FORMAT parquet)",
            {"path": str(flagged)},
        )
        workspace.connection.execute(
            "CREATE OR REPLACE TABLE c AS SELECT *, NULL::VARCHAR AS phone, NULL::VARCHAR AS first_name, "
            "NULL::VARCHAR AS last_name, 'GB' AS country, NULL::VARCHAR AS state, "
            "NULL::BOOLEAN AS limited_data_use FROM read_parquet($path)",
            {"path": str(flagged)},
        )
        workspace.connection.execute("COPY c TO $path (FORMAT parquet)", {"path": str(flagged)})
        # and orders of each, in the window, and one of the refusing customer's before it
        orders = write(
            workspace,
            "orders.parquet",
            [
                ("n1", "no", "p", 1, 1.0, datetime(2026, 11, 21)),
                ("n0", "no", "p", 1, 1.0, datetime(2026, 11, 1)),
                ("y1", "yes", "p", 1, 2.0, datetime(2026, 11, 22)),
                ("b1", "blank", "p", 1, 3.0, datetime(2026, 11, 23)),
                ("b0", "blank", "p", 1, 3.0, datetime(2026, 11, 2)),
            ],
        )
        # When the new orders are numbered
        found = load_new_orders(
            workspace, orders=orders, customers_file=flagged, sent_orders=None, cutoff=CUTOFF
        )
        sent = [
            order for chunk in order_chunks(workspace, 0, found.in_window, 10) for order in chunk.order_ids
        ]
    # Then only the orders of customers who did not refuse are read back to send; the refusing
    # customer's are counted apart, whatever their time
    assert sent == ["y1", "b1"]
    assert (found.total, found.in_window, found.refused, found.too_old) == (5, 2, 2, 1)
