-- The hosted checkout's paid orders as the data bucket holds them, before they are read: the day
-- parts (compacted) and the single orders since (shared/payments/order_files.py), one row each.
CREATE OR REPLACE TABLE checkout_order_files (
    order_id VARCHAR,
    product_id VARCHAR,
    quantity INTEGER,
    amount_total BIGINT,
    amount DOUBLE,
    currency VARCHAR,
    paid_at_epoch BIGINT,
    email VARCHAR,
    name VARCHAR,
    compacted BOOLEAN
)
