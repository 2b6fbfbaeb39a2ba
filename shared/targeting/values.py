"""Customer values for a value-based seed (docs/platform-notes.md §4.1), from a segment's scores.

The platform takes any non-negative number as a customer's value; the service predicts one. The
models predict purchase probabilities, not spend, so there is no spend model to ask: the value is the
*expected spend of one order*, ``P(buy the product within the model's horizon) x the customer's
average order value`` (spend ever / orders ever, as of the model's training). A customer without an
order has no average of their own and takes the shop's (all spend / all orders of the training
users), so the value still ranks them by the model's probability instead of calling them worthless.
Values are in the shop's currency, rounded to 4 decimals (small probabilities times small orders stay
above 0).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

VALUE_DECIMALS = 4


def shop_average_order_value(spend: NDArray[np.float64], orders: NDArray[np.float64]) -> float:
    """All spend over all orders (0 for a shop without orders)."""
    total_orders = float(np.sum(orders))
    return max(0.0, float(np.sum(spend)) / total_orders) if total_orders > 0 else 0.0


def predicted_values(
    probabilities: NDArray[np.float64],
    spend: NDArray[np.float64],
    orders: NDArray[np.float64],
    shop_average: float,
) -> NDArray[np.float64]:
    """``probability x average order value`` per customer (see the module docstring), the arrays
    aligned one entry per customer; ``shop_average`` stands in for a customer without orders. Every
    value is finite, non-negative and rounded to ``VALUE_DECIMALS``."""
    spend = np.asarray(spend, dtype=np.float64)
    orders = np.asarray(orders, dtype=np.float64)
    own = np.divide(spend, orders, out=np.full(spend.shape, shop_average), where=orders > 0)
    probability = np.clip(np.nan_to_num(np.asarray(probabilities, dtype=np.float64), nan=0.0), 0.0, 1.0)
    return np.round(probability * np.maximum(own, 0.0), VALUE_DECIMALS)
