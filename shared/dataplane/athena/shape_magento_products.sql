/* Magento's products export into products (shared/datasources/shop_exports.py): one row per SKU in the */
/* default scope; the rows a store view overrides (a store_view_code) repeat a product and are not read. */
/* Its category is the first of the categories cell's paths ("Default Category/Gear/Bags,..."), the last */
/* step of that path ("Bags"). */
CREATE OR REPLACE TABLE raw AS
SELECT
  record,
  product_id,
  name,
  NULLIF(TRIM(REGEXP_EXTRACT(SPLIT_PART(category, ',', 1), '([^/]*)$', 1)), '') AS category,
  price
FROM raw
WHERE
  _store_view IS NULL
