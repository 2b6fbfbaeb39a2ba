-- The hosted checkout's paid orders (`checkout_order_files`: the day parts and the single orders
-- since), one row per order id, into `checkout_orders`: the buyer's e-mail trimmed and lower-cased,
-- as the pixel's buyer id is made. What the provider refunded or a lost dispute took back
-- (`checkout_refunds`) is taken off: an order refunded in full is no purchase and is left out; one
-- refunded in part counts at the amount the merchant kept (its amount times the share of its total
-- not refunded).
CREATE OR REPLACE TABLE checkout_orders AS
SELECT
    f.order_id,
    f.product_id,
    f.quantity,
    CASE
        WHEN r.amount_refunded IS NULL THEN f.amount
        ELSE round(f.amount * (f.amount_total - r.amount_refunded) / f.amount_total, 6)
    END AS amount,
    make_timestamp(f.paid_at_epoch * 1000000) AS paid_at,
    nullif(lower(trim(f.email)), '') AS email,
    nullif(trim(f.name), '') AS name
FROM checkout_order_files AS f
LEFT JOIN checkout_refunds AS r ON r.order_id = f.order_id
WHERE r.amount_refunded IS NULL OR r.amount_refunded < f.amount_total
QUALIFY row_number() OVER (PARTITION BY f.order_id ORDER BY f.compacted DESC) = 1
