-- The compacted day parts of the hosted checkout's orders (Parquet, written by
-- `checkout_order_day`) into `checkout_order_files`.
INSERT INTO checkout_order_files
SELECT
    order_id,
    product_id,
    quantity,
    amount_total,
    amount,
    currency,
    paid_at_epoch,
    email,
    name,
    TRUE AS compacted
FROM read_parquet($parts)
