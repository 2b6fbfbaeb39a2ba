/* catalog.npz of a dataset version (shared.datasources.catalog): every good product's id, name and */
/* category ('' for one not given) and price (NULL: none), by product_id. */
SELECT
  product_id,
  COALESCE(name, '') AS name,
  COALESCE(category, '') AS category,
  price
FROM products
ORDER BY
  product_id
