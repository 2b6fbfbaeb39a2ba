-- One day's orders (UTC), one row per order id (two parts of a day may hold the same order), in
-- the time they were paid: the day's new Parquet part.
SELECT
    order_id,
    product_id,
    quantity,
    amount_total,
    amount,
    currency,
    paid_at_epoch,
    email,
    name
FROM (
    SELECT
        *,
        row_number() OVER (PARTITION BY order_id ORDER BY compacted DESC) AS copy
    FROM checkout_order_files
    WHERE strftime(make_timestamp(paid_at_epoch * 1000000), '%Y-%m-%d') = $day
) AS day_orders
WHERE copy = 1
ORDER BY paid_at_epoch, order_id
