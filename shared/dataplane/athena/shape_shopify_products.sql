/* Shopify's products export into products (shared/datasources/shop_exports.py): one row per variant, */
/* keyed by its SKU (as the orders export names what was bought). A row with neither SKU, title nor */
/* price holds only another image of the product above it: it is not a product, so it is not read. */
CREATE OR REPLACE TABLE raw AS
SELECT
  record,
  product_id,
  name,
  category,
  price
FROM raw
WHERE
  NOT (
    product_id IS NULL AND name IS NULL AND price IS NULL
  )
