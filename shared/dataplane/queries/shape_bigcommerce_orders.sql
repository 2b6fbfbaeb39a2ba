-- BigCommerce's orders export into order lines (shared/datasources/shop_exports.py): one row per order,
-- its items in the Product Details cell, separated by "|", each written "Product ID: 86, Product Qty: 2,
-- Product SKU: MUG-1, Product Name: Mug, ..., Product Unit Price: 8.50, Product Total Price: 17.00".
-- Each item becomes an order line (its SKU, quantity and total price; a part not found is left NULL for
-- the checks to name), numbered in file order, with the record it came from (`_source_record`, so that
-- a problem is named by the order's line). The customer is the order's e-mail, trimmed and lower-cased;
-- the Order Date, "dd/mm/yyyy" (the default template's) or "yyyy-mm-dd", is that day at midnight UTC.
CREATE OR REPLACE TABLE raw AS
WITH items AS (
    SELECT
        r.record AS _source_record,
        t.position,
        r.order_id,
        lower(trim(r.user_id)) AS user_id,
        t.item,
        r."timestamp" AS order_date
    FROM raw AS r
    CROSS JOIN UNNEST(string_split(coalesce(r._items, ''), '|')) WITH ORDINALITY AS t(item, position)
)
SELECT
    row_number() OVER (ORDER BY _source_record, position) AS record,
    _source_record,
    order_id,
    user_id,
    nullif(trim(regexp_extract(item, 'Product SKU:([^,]*)', 1)), '') AS product_id,
    nullif(trim(regexp_extract(item, 'Product Qty:([^,]*)', 1)), '') AS quantity,
    nullif(trim(regexp_extract(item, 'Product Total Price:([^,]*)', 1)), '') AS amount,
    CASE
        WHEN regexp_full_match(trim(order_date), '[0-9]{2}/[0-9]{2}/[0-9]{4}')
            THEN strftime(strptime(trim(order_date), '%d/%m/%Y'), '%Y-%m-%d %H:%M:%S')
        WHEN regexp_full_match(trim(order_date), '[0-9]{4}-[0-9]{2}-[0-9]{2}')
            THEN trim(order_date) || ' 00:00:00'
        ELSE order_date
    END AS "timestamp"
FROM items
