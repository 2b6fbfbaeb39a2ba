-- orders.parquet of a dataset version (docs/data-plane.md): order lines in time order (UTC), ties in
-- file order.
SELECT order_id, user_id, product_id, quantity, amount, "timestamp" FROM orders ORDER BY "timestamp", record
