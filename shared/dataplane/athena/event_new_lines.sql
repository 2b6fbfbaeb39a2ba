/* The lines of the numbered new orders, stored by order number, then product, then amount. */
CREATE OR REPLACE TABLE event_new_lines AS
SELECT
  n.seq,
  o.product_id,
  o.quantity,
  o.amount
FROM event_new_orders AS n
JOIN event_orders AS o
  ON o.order_id = n.order_id
WHERE
  NOT n.seq IS NULL
ORDER BY
  n.seq,
  o.product_id,
  o.amount
