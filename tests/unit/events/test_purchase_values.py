"""A purchase's predicted value (issue 21, item 4): the value-based seeds' value of the customer for each
of the order's products (``shared.targeting.values``), summed, from a real trained purchase model."""

from __future__ import annotations

import numpy as np
import pytest

from shared.events.values import PurchaseValues
from shared.ml.scoring import ScoringBundle, load_bundle
from shared.ml.trained import TrainingConfig
from shared.ml.training import train_model
from shared.targeting.values import predicted_values, shop_average_order_value
from tools.synthetic import SyntheticConfig, generate_shop


@pytest.fixture(scope="module")
def bundle() -> ScoringBundle:
    shop = generate_shop(SyntheticConfig(n_users=300, n_products=30, seed=3))
    trained = train_model(shop.data, name="shop-purchase", model_type="purchase", config=TrainingConfig())
    return load_bundle(trained.artifacts["bundle"].data)


def test_pairs_scored_together_score_as_each_pair_alone(bundle: ScoringBundle) -> None:
    # Given pairs of known users with known and unknown products, and an unknown user
    users = bundle.user_ids_at(np.arange(20))
    products = [bundle.predict_top_products(users[0], k=3)[0].product_id, "no-such-product"] * 10
    # When they are scored together
    together = bundle.score_pairs([*users, "no-such-user"], [*products, products[0]])
    # Then each known pair scores as score_purchase scores it alone, and the unknown user is NaN
    alone = [bundle.score_purchase(user, product) for user, product in zip(users, products, strict=True)]
    assert np.allclose(together[:20], alone, rtol=0, atol=1e-12)
    assert np.isnan(together[20])


def test_an_orders_value_is_the_seeds_value_of_its_customer_summed_over_its_products(
    bundle: ScoringBundle,
) -> None:
    # Given an order of two products (one twice) by a known customer
    user = bundle.user_ids_at(np.arange(5))[3]
    first, second = (p.product_id for p in bundle.predict_top_products(user, k=2))
    # When its value is predicted
    [value] = PurchaseValues(bundle, "shop-purchase v1").of_orders([user], [[first, second, first]])
    # Then it is the value the seeds give the customer for each distinct product, added up
    spend, orders = bundle.spend_and_orders()
    position = int(bundle.user_positions([user])[0])
    expected = sum(
        float(
            predicted_values(
                np.array([bundle.score_purchase(user, product)]),
                spend[[position]],
                orders[[position]],
                shop_average_order_value(spend, orders),
            )[0]
        )
        for product in (first, second)
    )
    assert value == pytest.approx(expected, abs=1e-9)
    assert expected > 0


def test_a_customer_the_model_does_not_know_or_an_order_without_products_has_no_value(
    bundle: ScoringBundle,
) -> None:
    known = bundle.user_ids_at(np.arange(1))[0]
    values = PurchaseValues(bundle, "shop-purchase v1").of_orders(
        ["a-new-customer", known, known], [["p1"], [], ["p1"]]
    )
    assert values[0] is None
    assert values[1] is None
    assert values[2] is not None
