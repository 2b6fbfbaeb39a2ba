"""Product taste factors: what customers bought together, as unit-length product vectors (the
positive pointwise mutual information of co-purchases, factorised). The purchase model's ``taste``
features and the recommender's ``taste`` part both read them.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray
from scipy import sparse
from sklearn.decomposition import TruncatedSVD

from shared.ml.shop_arrays import SplitShop, interaction_matrix
from shared.ml.trained import TrainingConfig

TASTE_FACTORS = 12
# Context-distribution smoothing of the mutual information (as in word embeddings): rare products are
# weighted as if a little more common, so a single shared buyer does not make two products alike.
_CONTEXT_SMOOTHING = 0.75
# Distinct products of one customer the co-occurrence counts at most (a uniform draw of them): a
# basket of n products adds n^2 pairs, and a grocery customer's year holds hundreds (The Complete
# Journey: about 370, which made products x products 330M pairs and 6 GB).
_TASTE_BASKET = 64


def taste_factors(
    shop: SplitShop, as_of_day: float, config: TrainingConfig, dimensions: int = 0
) -> NDArray[np.float64]:
    """Unit-length product factors of what customers bought together before ``as_of_day``
    (``dimensions``, by default ``TASTE_FACTORS``, fewer for a tiny catalogue), for
    ``user_product_affinity`` and the recommendation model's taste.

    Two products are alike when the same customers buy both more often than their popularity
    explains: the positive pointwise mutual information of the product co-occurrence counts
    (customers who bought both), with context smoothing, factorised by a truncated SVD whose factors
    are scaled by the square roots of the singular values. On the synthetic shops this describes a
    customer's taste better than factorising the purchase counts, which popularity dominates.
    """
    bought = interaction_matrix(shop, shop.history.before(as_of_day))
    buyers = np.flatnonzero(bought.getnnz(axis=1))
    if buyers.size > config.max_taste_users:
        # Products x products grows with the square of each basket: a uniform sample of buyers
        # estimates the mutual information of every product bought often enough to matter.
        sample = np.random.default_rng(config.seed).choice(buyers, config.max_taste_users, replace=False)
        bought = bought[np.sort(sample)]
    bought.data = np.ones_like(bought.data)
    bought = _at_most_per_row(bought, _TASTE_BASKET, np.random.default_rng(config.seed))
    together = sparse.coo_matrix(bought.T @ bought, dtype=np.float64)
    n_products = together.shape[0]
    components = max(1, min(dimensions or TASTE_FACTORS, n_products - 1))
    other = together.row != together.col  # a product is not its own context
    rows, columns, pairs = together.row[other], together.col[other], together.data[other]
    if pairs.size == 0:
        return np.zeros((n_products, components))
    counts = np.bincount(rows, pairs, minlength=n_products)
    total = float(counts.sum())
    context = counts**_CONTEXT_SMOOTHING
    context /= context.sum()
    pmi = np.log(pairs / total) - np.log(counts[rows] / total) - np.log(context[columns])
    positive = pmi > 0
    ppmi = sparse.csr_matrix(
        (pmi[positive], (rows[positive], columns[positive])), shape=together.shape, dtype=np.float64
    )
    svd = TruncatedSVD(n_components=components, random_state=config.seed).fit(ppmi)
    factors = svd.transform(ppmi) / np.sqrt(np.maximum(svd.singular_values_, 1e-12))
    norms = np.linalg.norm(factors, axis=1, keepdims=True)
    return np.divide(factors, norms, out=np.zeros_like(factors), where=norms > 0)


def _at_most_per_row(matrix: sparse.csr_matrix, most: int, rng: np.random.Generator) -> sparse.csr_matrix:
    """``matrix`` with at most ``most`` entries a row, the ones kept drawn uniformly (rows with fewer
    are kept whole)."""
    lengths = np.diff(matrix.indptr)
    if lengths.size == 0 or int(lengths.max()) <= most:
        return matrix
    rows = np.repeat(np.arange(lengths.size), lengths)
    order = np.lexsort((rng.random(rows.size), rows))
    rank = np.empty(rows.size, dtype=np.int64)
    rank[order] = np.arange(rows.size) - matrix.indptr[rows[order]]
    keep = rank < most
    kept = sparse.csr_matrix(
        (
            matrix.data[keep],
            matrix.indices[keep],
            np.concatenate([[0], np.cumsum(np.minimum(lengths, most))]),
        ),
        shape=matrix.shape,
    )
    return kept
