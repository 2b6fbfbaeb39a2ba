-- BigCommerce's products export into products (shared/datasources/shop_exports.py): a "Product" row is a
-- product and each "SKU" row under it one of its variants, keyed by its own SKU (what the orders name);
-- a variant's name, category and (when it has none) price are its product's, the last "Product" row
-- above it. A product with variants and no SKU of its own is its variants; other rows ("Rule") are not
-- products. The category is the first of the Category cell's paths ("Shop All/Bags;Sale"), the last step
-- of that path ("Bags").
CREATE OR REPLACE TABLE raw AS
WITH rows AS (
    SELECT
        record,
        _item_type,
        product_id,
        name,
        category,
        price,
        max(CASE WHEN _item_type = 'Product' THEN record END) OVER (ORDER BY record) AS product_record,
        lead(_item_type) OVER (ORDER BY record) AS next_type
    FROM raw
),
products AS (
    SELECT record, name, category, price FROM rows WHERE _item_type = 'Product'
)
SELECT
    r.record,
    r.product_id,
    CASE WHEN r._item_type = 'SKU' THEN p.name ELSE r.name END AS name,
    nullif(
        trim(regexp_extract(split_part(CASE WHEN r._item_type = 'SKU' THEN p.category ELSE r.category END, ';', 1), '([^/]*)$', 1)),
        ''
    ) AS category,
    CASE WHEN r._item_type = 'SKU' THEN coalesce(r.price, p.price) ELSE r.price END AS price
FROM rows AS r
LEFT JOIN products AS p ON p.record = r.product_record
WHERE r._item_type = 'SKU' OR (r._item_type = 'Product' AND NOT (r.product_id IS NULL AND r.next_type = 'SKU'))
