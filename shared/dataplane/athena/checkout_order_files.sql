/* The hosted checkout's paid orders as the data bucket holds them, before they are read: the day */
/* parts (compacted) and the single orders since (shared/payments/order_files.py), one row each. */
CREATE OR REPLACE TABLE checkout_order_files (
  order_id STRING,
  product_id STRING,
  quantity INT,
  amount_total BIGINT,
  amount DOUBLE,
  currency STRING,
  paid_at_epoch BIGINT,
  email STRING,
  name STRING,
  compacted BOOLEAN
)
