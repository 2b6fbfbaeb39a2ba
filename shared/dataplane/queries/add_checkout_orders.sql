-- The orders of `checkout_buyers` into `orders`: records numbered after the file's, in time order.
INSERT INTO orders (record, order_id, user_id, product_id, quantity, amount, "timestamp")
SELECT
    (SELECT coalesce(max(record), 0) FROM orders) + row_number() OVER (ORDER BY paid_at, order_id) AS record,
    order_id,
    user_id,
    product_id,
    quantity,
    amount,
    paid_at AS "timestamp"
FROM checkout_buyers
