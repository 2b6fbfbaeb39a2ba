-- Per customer with an order, by its position in the sorted user ids (encode_order_lines.sql): orders
-- placed (distinct order ids), revenue, and the last order's time (epoch microseconds, UTC). A
-- customer without an order has no row (the caller fills in 0, 0 and -1).
SELECT
    order_user,
    count(DISTINCT order_key) AS orders,
    sum(order_amount) AS revenue,
    max(order_time) AS last_order
FROM encoded_lines
GROUP BY order_user
