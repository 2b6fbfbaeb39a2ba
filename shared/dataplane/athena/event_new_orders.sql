/* The orders of `event_orders` not in `event_sent_orders`, one row per order: its customer and their */
/* identifiers, its time (the earliest of its lines) and value (the sum of its lines' amounts). Orders */
/* placed at or after $cutoff are numbered `seq` from 0 in time order (ties by order id): the order a */
/* send goes in and resumes at; the table is stored in that order, so a range of numbers reads only its */
/* own rows. Older orders have no number: they are outside the platform's window and are skipped. */
CREATE OR REPLACE TABLE event_new_orders AS
WITH fresh AS (
  SELECT
    o.order_id,
    MIN(o.user_id) AS user_id,
    MIN(o."timestamp") AS ordered_at,
    SUM(o.amount) AS order_value
  FROM event_orders AS o
  LEFT JOIN event_sent_orders AS s
    ON s.order_id = o.order_id
  WHERE
    s.order_id IS NULL
  GROUP BY
    o.order_id
), numbered AS (
  SELECT
    f.*,
    CASE
      WHEN f.ordered_at >= :cutoff
      THEN ROW_NUMBER() OVER (PARTITION BY f.ordered_at >= :cutoff ORDER BY f.ordered_at, f.order_id) - 1
    END AS seq
  FROM fresh AS f
)
SELECT
  n.seq,
  n.order_id,
  n.user_id,
  n.ordered_at,
  n.order_value,
  c.email,
  c.phone,
  c.first_name,
  c.last_name,
  c.country,
  c.state,
  c.limited_data_use
FROM numbered AS n
LEFT JOIN event_customers AS c
  ON c.user_id = n.user_id
ORDER BY
  n.seq
