"""A dataset version's new orders, in the engine, read a chunk at a time (docs/data-plane.md, issue 21).

The orders of the version (its ``orders.parquet``) that are not in the version whose purchases were
last sent in full are the new ones: an anti-join in the engine, never a Python set of order ids.
The new orders inside the platform's window are numbered in time order and stored in that order with
their customers' identifiers, so a chunk of numbers is a range read, and a step killed half-way
resumes at the number it had reached. Only a chunk's orders (at most the batch size) are ever Python
objects, and they leave as events.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from shared.audiences.preparation import IdentifierColumns
from shared.dataplane import queries
from shared.dataplane.engine import Workspace
from shared.events.building import ActionSource, Content, ServerEvent, customers, purchase_event
from shared.events.values import PurchaseValues


@dataclass(frozen=True, slots=True)
class NewOrders:
    """How many orders of the version are new, how many of those are inside the window and sent, and
    how many are of customers who refused marketing (never sent)."""

    total: int
    in_window: int
    refused: int = 0

    @property
    def too_old(self) -> int:
        """New orders of customers who did not refuse, placed before the window."""
        return self.total - self.in_window - self.refused


@dataclass(frozen=True, slots=True)
class OrderChunk:
    """The new orders numbered ``start`` to ``start + len - 1``, as columns, with their lines."""

    start: int
    order_ids: list[str]
    user_ids: list[str]
    ordered_at: list[int]
    values: list[float]
    identifiers: IdentifierColumns
    contents: list[list[Content]]

    def __len__(self) -> int:
        return len(self.order_ids)


def load_new_orders(
    workspace: Workspace,
    *,
    orders: Path,
    customers_file: Path,
    sent_orders: Path | None,
    cutoff: datetime,
) -> NewOrders:
    """Read the version's ``orders`` and ``customers_file`` (Parquet) and the ``sent_orders`` of the
    version last sent in full (None: nothing sent yet) into the engine, and number the new orders
    placed at or after ``cutoff`` by customers who did not refuse marketing (``marketing_consent``
    false): only numbered orders are ever read back and sent."""
    connection = workspace.connection
    queries.run(connection, "read_event_orders", {"path": str(orders)})
    queries.run(connection, "read_event_customers", {"path": str(customers_file)})
    if sent_orders is None:
        queries.run(connection, "event_no_sent_orders")
    else:
        queries.run(connection, "read_event_sent_orders", {"path": str(sent_orders)})
    queries.run(connection, "event_new_orders", {"cutoff": cutoff.astimezone(UTC).replace(tzinfo=None)})
    queries.run(connection, "event_new_lines")
    row = queries.run(connection, "event_order_counts").fetchone()
    assert row is not None
    return NewOrders(total=int(row[0]), in_window=int(row[1]), refused=int(row[2] or 0))


def order_chunks(workspace: Workspace, start: int, stop: int, size: int) -> Iterator[OrderChunk]:
    """The new orders numbered ``start`` to ``stop - 1``, ``size`` at a time, in order."""
    for first in range(start, stop, size):
        last = min(first + size, stop)
        yield _chunk(workspace, first, last)


def _chunk(workspace: Workspace, start: int, stop: int) -> OrderChunk:
    bounds = {"start": start, "stop": stop}
    rows = queries.run(workspace.connection, "event_order_chunk", bounds).fetchall()
    contents: list[list[Content]] = [[] for _ in rows]
    for seq, product_id, quantity, amount in queries.run(
        workspace.connection, "event_order_chunk_lines", bounds
    ).fetchall():
        units = int(quantity)
        contents[int(seq) - start].append(Content(str(product_id), units, float(amount) / units))
    columns: list[list[Any]] = [list(column) for column in zip(*rows, strict=True)] if rows else [[]] * 18
    flags = columns[11]
    return OrderChunk(
        start=start,
        order_ids=[str(value) for value in columns[1]],
        user_ids=[str(value) for value in columns[2]],
        ordered_at=[int(value) for value in columns[3]],
        values=[float(value) for value in columns[4]],
        identifiers=IdentifierColumns(
            user_ids=[str(value) for value in columns[2]],
            emails=columns[5],
            phones=columns[6],
            first_names=columns[7],
            last_names=columns[8],
            countries=columns[9],
            limited_data_use=flags if any(flag is not None for flag in flags) else None,
            states=columns[10],
            cities=_given(columns[12]),
            postcodes=_given(columns[13]),
            dates_of_birth=_given(columns[14]),
            genders=_given(columns[15]),
            external_ids=_given(columns[16]),
            madids=_given(columns[17]),
        ),
        contents=contents,
    )


def _given(column: list[Any]) -> list[Any] | None:
    # A key no customer of the chunk has is left out, as the uploads leave it out.
    return column if any(value is not None for value in column) else None


def purchase_events(
    chunk: OrderChunk,
    *,
    currency: str,
    action_source: ActionSource = ActionSource.OTHER,
    default_country: str | None = None,
    values: PurchaseValues | None = None,
) -> list[ServerEvent]:
    """One ``Purchase`` per order of ``chunk``: the order id as event id, the customer through the
    audiences' normaliser, the order's value in ``currency`` and its products, and with ``values`` (a
    purchase model in force) the customer's predicted value (``shared.events.values``).

    ``action_source``: an order file says nothing of where the sale happened, nor carries the page
    and browser a website event needs (docs/platform-notes.md §11.2), so purchases from the shop's
    orders are ``other`` unless the data says they were in store."""
    matched = customers(chunk.identifiers, default_country=default_country)
    predicted: list[float | None] = (
        values.of_orders(chunk.user_ids, [[item.product_id for item in items] for items in chunk.contents])
        if values is not None
        else [None] * len(chunk)
    )
    return [
        purchase_event(
            order_id=order_id,
            event_time=ordered_at,
            action_source=action_source,
            customer=matched[user_id],
            value=value,
            currency=currency,
            contents=contents,
            predicted_ltv=ltv,
        )
        for order_id, user_id, ordered_at, value, contents, ltv in zip(
            chunk.order_ids,
            chunk.user_ids,
            chunk.ordered_at,
            chunk.values,
            chunk.contents,
            predicted,
            strict=True,
        )
    ]
