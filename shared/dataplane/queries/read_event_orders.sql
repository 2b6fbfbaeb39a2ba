-- The order lines of the dataset version whose purchases are sent (issue 21), from its orders.parquet,
-- into `event_orders`.
CREATE OR REPLACE TABLE event_orders AS
SELECT order_id, user_id, product_id, quantity, amount, "timestamp" FROM read_parquet($path)
