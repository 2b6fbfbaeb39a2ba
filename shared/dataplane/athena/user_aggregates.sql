/* Per customer, by user id: orders placed (distinct order ids), revenue, and the last order's time */
/* (epoch microseconds, UTC; NULL for a customer without an order). */
SELECT
  c.user_id,
  COUNT(DISTINCT o.order_id) AS orders,
  COALESCE(SUM(o.amount), 0) AS revenue,
  CAST(ROUND(MAX(TO_UNIXTIME(o."timestamp")) * 1000000) AS BIGINT) AS last_order
FROM customers AS c
LEFT JOIN orders AS o
  ON o.user_id = c.user_id
GROUP BY
  c.user_id
ORDER BY
  c.user_id
