from __future__ import annotations

from collections import Counter
from datetime import timedelta

import numpy as np

from tools.synthetic import SyntheticConfig, SyntheticShop, generate_shop


def test_same_seed_generates_the_same_shop() -> None:
    # Given two generators with one seed
    config = SyntheticConfig(n_users=50, n_products=20, seed=3)

    # When both run
    first, second = generate_shop(config), generate_shop(config)

    # Then the data is identical
    assert first.data == second.data


def test_customers_look_real_but_use_reserved_domains(shop: SyntheticShop) -> None:
    # Given the generated customers
    customers = shop.data.customers

    # Then countries are the supported ones and e-mails cannot reach a real person
    assert {c.country for c in customers} == {"GB", "US", "CA", "AU"}
    assert all(c.email.endswith(("@example.com", "@example.org")) for c in customers if c.email)
    assert all(c.first_name and c.last_name for c in customers)


def test_sales_have_a_long_tail(shop: SyntheticShop) -> None:
    # Given units sold per product
    sales = sorted(Counter(o.product_id for o in shop.data.orders).values(), reverse=True)

    # Then the top 10% of products make a far larger share than 10% of the sales
    top = sales[: max(1, len(sales) // 10)]
    assert sum(top) / sum(sales) > 0.3


def test_oracle_matches_the_observed_purchase_rate(shop: SyntheticShop) -> None:
    # Given the last 30 days and every (user, product) pair
    end = shop.end
    start = end - timedelta(days=30)
    users, products = np.divmod(
        np.arange(shop.config.n_users * shop.config.n_products), shop.config.n_products
    )

    # When the oracle predicts who buys
    expected = shop.probability_by_index(users, products, start, end).sum()

    # Then it agrees with the number of pairs that actually bought (Poisson noise allowed)
    window = {(o.user_id, o.product_id) for o in shop.data.orders if start <= o.timestamp < end}
    assert abs(len(window) - expected) < 4 * np.sqrt(expected)
