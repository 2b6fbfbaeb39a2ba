-- WooCommerce's products export into products (shared/datasources/shop_exports.py): one row per
-- product or variation, keyed by its SKU (as the orders export names what was bought). A variable
-- product without a SKU of its own is its variations (rows of their own), so it is not read. Its
-- category is the first of the Categories cell's ("Clothing > Shirts, Sale"), the last step of that
-- path ("Shirts").
CREATE OR REPLACE TABLE raw AS
SELECT
    record,
    product_id,
    name,
    nullif(trim(regexp_extract(split_part(category, ',', 1), '([^>]*)$', 1)), '') AS category,
    price
FROM raw
WHERE NOT (product_id IS NULL AND _type = 'variable')
