"""The customer's predicted value on each purchase (issue 21, item 4): ``custom_data.predicted_ltv``.

Computed as the value-based seeds compute a customer's value (``shared.targeting.values``): the
probability the purchase model in force gives the customer of buying a product within its horizon,
times the customer's average order (the shop's for a customer without orders). A purchase names its
products, so the value of a purchase is that value summed over the order's distinct products: what the
customer is expected to spend again on what they just bought within the model's horizon, in the shop's
currency. A customer the model was not trained on (new since its training) has no predicted value, and
their purchase goes without one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from shared.ml.scoring import ScoringBundle
from shared.targeting.values import predicted_values, shop_average_order_value


@dataclass
class PurchaseValues:
    """Predicted values from one purchase model's bundle; ``model`` names it (``shop-purchase v3``)."""

    bundle: ScoringBundle
    model: str
    _spend: NDArray[np.float64] = field(init=False, repr=False)
    _orders: NDArray[np.float64] = field(init=False, repr=False)
    _shop_average: float = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._spend, self._orders = self.bundle.spend_and_orders()
        # Every training user's, as the seeds take it, not only the customers of one batch.
        self._shop_average = shop_average_order_value(self._spend, self._orders)

    def of_orders(self, user_ids: Sequence[str], products: Sequence[Sequence[str]]) -> list[float | None]:
        """The predicted value of each order ``i``, bought by ``user_ids[i]`` with ``products[i]`` (its
        product ids, repeats allowed): None when the model does not know the customer or the order
        names no product. Every pair of a batch is scored together."""
        pair_orders: list[int] = []
        pair_users: list[str] = []
        pair_products: list[str] = []
        for position, (user_id, bought) in enumerate(zip(user_ids, products, strict=True)):
            for product_id in dict.fromkeys(bought):
                pair_orders.append(position)
                pair_users.append(user_id)
                pair_products.append(product_id)
        values: list[float | None] = [None] * len(user_ids)
        if not pair_orders:
            return values
        probabilities = self.bundle.score_pairs(pair_users, pair_products)
        users = self.bundle.user_positions(pair_users)
        known = users >= 0
        if not known.any():
            return values
        pair_values = predicted_values(
            probabilities[known], self._spend[users[known]], self._orders[users[known]], self._shop_average
        )
        sums = np.bincount(
            np.asarray(pair_orders, dtype=np.int64)[known], weights=pair_values, minlength=len(user_ids)
        )
        for position in set(np.asarray(pair_orders)[known].tolist()):
            values[position] = float(sums[position])
        return values
