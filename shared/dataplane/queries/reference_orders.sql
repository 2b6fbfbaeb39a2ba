-- Order lines checked across files: an order after $now (UTC), for a customer or a product that is not
-- (validly) in its file. A line may have each of these problems.
INSERT INTO errors
SELECT 'orders', o.record, 'timestamp', 'is in the future', CAST(NULL AS BIGINT)
FROM orders AS o WHERE o."timestamp" > $now
UNION ALL
SELECT 'orders', o.record, 'user_id', 'user is not in the customers file (or its row was rejected)', CAST(NULL AS BIGINT)
FROM orders AS o WHERE NOT EXISTS (SELECT 1 FROM customers AS c WHERE c.user_id = o.user_id)
UNION ALL
SELECT 'orders', o.record, 'product_id', 'product is not in the products file (or its row was rejected)', CAST(NULL AS BIGINT)
FROM orders AS o WHERE NOT EXISTS (SELECT 1 FROM products AS p WHERE p.product_id = o.product_id)
