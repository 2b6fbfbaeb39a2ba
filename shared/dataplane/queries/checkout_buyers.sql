-- The hosted checkout's orders (`checkout_orders`) joined to the merchant's data, into
-- `checkout_buyers`: each buyer is the customer of the customers file with the same e-mail (trimmed,
-- lower-cased), else a customer of their own keyed as the pixel keys them: 'checkout-' and the first
-- 24 hex digits of the e-mail's SHA-256, or without an e-mail 'checkout-' and the order id. An order
-- already in the orders file, or for a product no longer in the products file, is left out.
CREATE OR REPLACE TABLE checkout_buyers AS
WITH known AS (
    SELECT lower(trim(email)) AS email, min(user_id) AS user_id
    FROM customers
    WHERE email IS NOT NULL
    GROUP BY lower(trim(email))
)
SELECT
    o.order_id,
    o.product_id,
    o.quantity,
    o.amount,
    o.paid_at,
    o.email,
    o.name,
    coalesce(
        k.user_id,
        'checkout-' || CASE WHEN o.email IS NULL THEN o.order_id ELSE left(sha256(o.email), 24) END
    ) AS user_id,
    k.user_id IS NULL AS new_customer
FROM checkout_orders AS o
LEFT JOIN known AS k ON k.email = o.email
WHERE o.order_id NOT IN (SELECT order_id FROM orders)
  AND o.product_id IN (SELECT product_id FROM products)
