"""A synthetic shop with a known oracle, to measure model quality against the truth.

Generative story (all randomness from one seed):

* Products belong to categories; each product has a latent vector near its category's centroid and a
  long-tail popularity bias ``-zipf_exponent * log(rank)`` (Zipf-like sales).
* Each user has a latent vector and an activity level (log-normal: a few heavy buyers, many light ones,
  some who never buy). Their taste over products is ``W[u] = softmax(affinity * <user, product> + bias)``.
* User ``u`` buys product ``i`` as a self-exciting point process with intensity
  ``activity[u] * W[u, i] * (1 + repeat_boost * bought_ui(t)) * season(t)``, where ``bought_ui(t)`` is 1 once
  ``u`` has bought ``i`` (repeat purchases; the boost saturates because a count-proportional one explodes),
  and ``season`` has a yearly wave, a weekend lift and a late-November-to-December peak.

The oracle is exact: for a pure-birth process the probability of *no* purchase in ``[start, end)`` only
depends on the intensity while nothing has happened, so given the history before ``start``
``P(buy at least once) = 1 - exp(-activity * W * (1 + repeat_boost * bought_ui(start)) * ∫ season)``.

Customers get plausible fake identities: e-mails at ``example.com`` / ``example.org`` (reserved
domains) and phone numbers in ranges set aside for fiction where a regulator has one.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta

import numpy as np
from numpy.typing import NDArray

from shared.ml.datasets import CustomerRecord, OrderRecord, ProductRecord, ShopData

_DAY_SECONDS = 86_400.0
_CATEGORIES = (
    "Shoes", "Outerwear", "Tops", "Bottoms", "Accessories", "Beauty", "Home", "Kitchen",
    "Toys", "Books", "Sports", "Garden", "Electronics", "Pets", "Stationery", "Grocery",
)  # fmt: skip
_FIRST_NAMES = (
    "Olivia", "Amelia", "Isla", "Ava", "Mia", "Grace", "Chloe", "Emily", "Ruby", "Sophie", "Noah", "Oliver",
    "George", "Arthur", "Leo", "Harry", "Jack", "Liam", "Ethan", "Lucas", "Mason", "Ella", "Zoe", "Aiden",
)  # fmt: skip
_LAST_NAMES = (
    "Smith", "Jones", "Williams", "Taylor", "Brown", "Davies", "Evans", "Wilson", "Thomas", "Johnson",
    "Roberts", "Walker", "Wright", "Martin", "Lee", "Nguyen", "Garcia", "Miller", "Clarke", "Kelly",
)  # fmt: skip
_ADJECTIVES = (
    "Classic",
    "Everyday",
    "Premium",
    "Eco",
    "Compact",
    "Deluxe",
    "Essential",
    "Urban",
    "Soft",
    "Bold",
)
_COUNTRIES = ("GB", "US", "CA", "AU")
_COUNTRY_WEIGHTS = (0.4, 0.35, 0.15, 0.1)


@dataclass(frozen=True)
class SyntheticConfig:
    """Size and shape of a synthetic shop. Defaults give ~2,000 users and ~15,000 orders in a year."""

    n_users: int = 2000
    n_products: int = 300
    n_categories: int = 12
    start: datetime = datetime(2024, 1, 1, tzinfo=UTC)
    days: int = 365
    seed: int = 0
    latent_dim: int = 8
    affinity: float = 1.5
    zipf_exponent: float = 0.9
    mean_orders_per_user_year: float = 7.0
    activity_sigma: float = 1.0
    repeat_boost: float = 2.0


@dataclass(frozen=True)
class SyntheticShop:
    """A generated shop: its data, and the latent truth behind it (the oracle)."""

    config: SyntheticConfig
    data: ShopData
    activity: NDArray[np.float64]  # per user, purchases per unit of seasonal time
    taste: NDArray[np.float64]  # (users, products), rows sum to 1
    season_cumulative: NDArray[np.float64]  # ∫ season from start, at each whole day 0..days
    order_user: NDArray[np.int64]
    order_product: NDArray[np.int64]
    order_day: NDArray[np.float64]  # days since config.start
    user_index: dict[str, int] = field(repr=False)
    product_index: dict[str, int] = field(repr=False)

    @property
    def end(self) -> datetime:
        """End of the generated period (exclusive)."""
        return self.config.start + timedelta(days=self.config.days)

    def purchase_probability(
        self, user_ids: list[str], product_ids: list[str], start: datetime, end: datetime
    ) -> NDArray[np.float64]:
        """True probability that each ``user_ids[k]`` buys ``product_ids[k]`` at least once in
        ``[start, end)``, given everything generated before ``start``. Unknown ids raise ``KeyError``."""
        users = np.array([self.user_index[u] for u in user_ids], dtype=np.int64)
        products = np.array([self.product_index[p] for p in product_ids], dtype=np.int64)
        return self.probability_by_index(users, products, start, end)

    def probability_by_index(
        self, users: NDArray[np.int64], products: NDArray[np.int64], start: datetime, end: datetime
    ) -> NDArray[np.float64]:
        """As :meth:`purchase_probability`, with user and product positions instead of ids."""
        start_day, end_day = self._day(start), self._day(end)
        exposure = self._season_integral(start_day, end_day)
        before = self.order_day < start_day
        n_products = self.config.n_products
        past_keys = self.order_user[before] * n_products + self.order_product[before]
        keys = np.unique(past_keys)
        query = users * n_products + products
        repeats = np.zeros(query.size)
        if keys.size:
            position = np.minimum(np.searchsorted(keys, query), keys.size - 1)
            repeats = (keys[position] == query).astype(np.float64)
        intensity = (
            self.activity[users] * self.taste[users, products] * (1 + self.config.repeat_boost * repeats)
        )
        return -np.expm1(-intensity * exposure)

    def _day(self, moment: datetime) -> float:
        return (moment - self.config.start).total_seconds() / _DAY_SECONDS

    def _season_integral(self, start_day: float, end_day: float) -> float:
        grid = np.arange(self.season_cumulative.size, dtype=np.float64)
        return float(
            np.interp(end_day, grid, self.season_cumulative)
            - np.interp(start_day, grid, self.season_cumulative)
        )


def generate_shop(config: SyntheticConfig | None = None) -> SyntheticShop:
    """Generate a shop (customers, products, orders) and its oracle from ``config`` (seeded, repeatable)."""
    config = config or SyntheticConfig()
    rng = np.random.default_rng(config.seed)
    category = _product_categories(rng, config)
    taste = _taste(rng, config, category)
    season_cumulative = np.concatenate([[0.0], np.cumsum(_season(config.start, config.days))])
    # Scale activity so the mean user places mean_orders_per_user_year orders per 365 days (before repeats).
    raw_activity = rng.lognormal(0.0, config.activity_sigma, config.n_users)
    per_unit_time = config.mean_orders_per_user_year / (season_cumulative[-1] * 365 / config.days)
    activity = raw_activity / raw_activity.mean() * per_unit_time
    users, products, days = _simulate(rng, config, activity, taste, season_cumulative)

    product_records = _products(rng, config, category)
    user_ids = [f"u{k:06d}" for k in range(config.n_users)]
    orders = _orders(rng, config, users, products, days, user_ids, product_records)
    return SyntheticShop(
        config=config,
        data=ShopData(customers=_customers(rng, user_ids), products=product_records, orders=orders),
        activity=activity,
        taste=taste,
        season_cumulative=season_cumulative,
        order_user=users,
        order_product=products,
        order_day=days,
        user_index={u: k for k, u in enumerate(user_ids)},
        product_index={p.product_id: k for k, p in enumerate(product_records)},
    )


def moved(shop: SyntheticShop, by: timedelta) -> SyntheticShop:
    """``shop`` with its start and every order's time ``by`` later: the same customers, products and
    orders in the same order, and an oracle that answers for times moved alike as before."""
    orders = [order.model_copy(update={"timestamp": order.timestamp + by}) for order in shop.data.orders]
    return replace(
        shop,
        config=replace(shop.config, start=shop.config.start + by),
        data=ShopData(shop.data.customers, shop.data.products, orders),
    )


def _product_categories(rng: np.random.Generator, config: SyntheticConfig) -> NDArray[np.int64]:
    # Category sizes are uneven too, as in real catalogues.
    weights = rng.dirichlet(np.full(config.n_categories, 2.0))
    return rng.choice(config.n_categories, size=config.n_products, p=weights).astype(np.int64)


def _taste(
    rng: np.random.Generator, config: SyntheticConfig, category: NDArray[np.int64]
) -> NDArray[np.float64]:
    """Row-stochastic (users, products) matrix: latent affinity plus long-tail popularity."""
    dim = config.latent_dim
    centroids = rng.normal(0.0, 1.0, (config.n_categories, dim))
    items = centroids[category] + rng.normal(0.0, 0.5, (config.n_products, dim))
    users = rng.normal(0.0, 1.0, (config.n_users, dim))
    rank = rng.permutation(config.n_products) + 1
    bias = -config.zipf_exponent * np.log(rank)
    logits = config.affinity * (users @ items.T) / np.sqrt(dim) + bias
    logits -= logits.max(axis=1, keepdims=True)
    weights = np.exp(logits)
    return weights / weights.sum(axis=1, keepdims=True)


def _season(start: datetime, days: int) -> NDArray[np.float64]:
    """Relative shopping intensity of each day: yearly wave, weekends, and the holiday peak."""
    dates = [start + timedelta(days=d) for d in range(days)]
    day_of_year = np.array([d.timetuple().tm_yday for d in dates], dtype=np.float64)
    weekend = np.array([d.weekday() >= 5 for d in dates], dtype=np.float64)
    holiday = np.array([(d.month == 11 and d.day >= 20) or (d.month == 12 and d.day <= 24) for d in dates])
    return (
        (1 + 0.25 * np.sin(2 * np.pi * (day_of_year - 80) / 365)) * (1 + 0.2 * weekend) * (1 + 0.8 * holiday)
    )


def _simulate(
    rng: np.random.Generator,
    config: SyntheticConfig,
    activity: NDArray[np.float64],
    taste: NDArray[np.float64],
    season_cumulative: NDArray[np.float64],
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64]]:
    """Simulate each user's purchases in seasonal time, then map the times back to calendar days."""
    horizon = season_cumulative[-1]
    users: list[int] = []
    products: list[int] = []
    times: list[float] = []
    for user in range(config.n_users):
        weights = taste[user].copy()  # W * (1 + boost * bought), updated as purchases happen
        clock = 0.0
        while True:
            total = weights.sum()
            clock += rng.exponential(1.0 / (activity[user] * total))
            if clock >= horizon:
                break
            product = int(np.searchsorted(np.cumsum(weights), rng.random() * total))
            product = min(product, config.n_products - 1)
            weights[product] = taste[user, product] * (1 + config.repeat_boost)
            users.append(user)
            products.append(product)
            times.append(clock)
    calendar = np.interp(
        np.array(times), season_cumulative, np.arange(season_cumulative.size, dtype=np.float64)
    )
    order = np.argsort(calendar, kind="stable")
    return (
        np.array(users, dtype=np.int64)[order],
        np.array(products, dtype=np.int64)[order],
        calendar[order],
    )


def _products(
    rng: np.random.Generator, config: SyntheticConfig, category: NDArray[np.int64]
) -> list[ProductRecord]:
    base_price = rng.lognormal(3.0, 0.6, config.n_categories)
    prices = base_price[category] * rng.lognormal(0.0, 0.3, config.n_products)
    return [
        ProductRecord(
            product_id=f"p{k:05d}",
            name=f"{_ADJECTIVES[k % len(_ADJECTIVES)]} {_CATEGORIES[category[k] % len(_CATEGORIES)]} {k}",
            category=_CATEGORIES[category[k] % len(_CATEGORIES)],
            price=round(float(prices[k]), 2),
        )
        for k in range(config.n_products)
    ]


def _orders(
    rng: np.random.Generator,
    config: SyntheticConfig,
    users: NDArray[np.int64],
    products: NDArray[np.int64],
    days: NDArray[np.float64],
    user_ids: list[str],
    product_records: list[ProductRecord],
) -> list[OrderRecord]:
    quantity = 1 + rng.poisson(0.2, users.size)
    discount = rng.choice([1.0, 1.0, 1.0, 0.9, 0.8], users.size)
    return [
        OrderRecord(
            order_id=f"o{k:08d}",
            user_id=user_ids[users[k]],
            product_id=product_records[products[k]].product_id,
            quantity=int(quantity[k]),
            amount=round(float(quantity[k] * (product_records[products[k]].price or 0.0) * discount[k]), 2),
            timestamp=config.start + timedelta(days=float(days[k])),
        )
        for k in range(users.size)
    ]


def _customers(rng: np.random.Generator, user_ids: list[str]) -> list[CustomerRecord]:
    customers = []
    for k, user_id in enumerate(user_ids):
        first = _FIRST_NAMES[rng.integers(len(_FIRST_NAMES))]
        last = _LAST_NAMES[rng.integers(len(_LAST_NAMES))]
        country = _COUNTRIES[rng.choice(len(_COUNTRIES), p=_COUNTRY_WEIGHTS)]
        domain = "example.com" if k % 3 else "example.org"
        customers.append(
            CustomerRecord(
                user_id=user_id,
                # Some customers never gave an e-mail or phone, as in real shops.
                email=f"{first}.{last}{k}@{domain}".lower() if rng.random() > 0.05 else None,
                first_name=first,
                last_name=last,
                phone=_phone(rng, country) if rng.random() > 0.3 else None,
                country=country,
            )
        )
    return customers


def _phone(rng: np.random.Generator, country: str) -> str:
    line = int(rng.integers(0, 100))
    if country == "GB":
        return f"+44 7700 900{line:03d}"  # Ofcom's drama range
    if country == "AU":
        return f"+61 491 570 {line:03d}"
    area = int(rng.integers(200, 990))
    return f"+1 {area} 555 01{line:02d}"  # 555-0100..0199 is fictional in North America
