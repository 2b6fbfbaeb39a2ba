-- The hosted checkout's paid orders (`checkout_order_files`: the day parts and the single orders
-- since), one row per order id, into `checkout_orders`: the buyer's e-mail trimmed and lower-cased,
-- as the pixel's buyer id is made.
CREATE OR REPLACE TABLE checkout_orders AS
SELECT
    order_id,
    product_id,
    quantity,
    amount,
    make_timestamp(paid_at_epoch * 1000000) AS paid_at,
    nullif(lower(trim(email)), '') AS email,
    nullif(trim(name), '') AS name
FROM checkout_order_files
QUALIFY row_number() OVER (PARTITION BY order_id ORDER BY compacted DESC) = 1
