/* The order lines as training reads them (docs/data-plane.md, training.npz), into `encoded_lines`: in */
/* time order (ties in file order), each line's user, product and order as 0-based positions in the */
/* sorted user ids, product ids and order ids, its day in epoch days (UTC), units and amount. */
CREATE OR REPLACE TABLE encoded_lines AS
WITH users AS (
  SELECT
    user_id,
    ROW_NUMBER() OVER (ORDER BY user_id) - 1 AS position
  FROM customers
), items AS (
  SELECT
    product_id,
    ROW_NUMBER() OVER (ORDER BY product_id) - 1 AS position
  FROM products
), order_keys AS (
  SELECT
    order_id,
    ROW_NUMBER() OVER (ORDER BY order_id) - 1 AS position
  FROM (
    SELECT DISTINCT
      order_id
    FROM orders
  ) AS distinct_orders
)
SELECT
  ROW_NUMBER() OVER (ORDER BY o."timestamp", o.record) - 1 AS position,
  CAST(u.position AS INTEGER) AS order_user,
  CAST(p.position AS INTEGER) AS order_product,
  CAST(TO_UNIXTIME(o."timestamp") AS DOUBLE) / 86400.0 AS order_day,
  CAST(o.quantity AS REAL) AS order_units,
  o.amount AS order_amount,
  CAST(k.position AS INTEGER) AS order_key,
  CAST(ROUND(TO_UNIXTIME(o."timestamp") * 1000000) AS BIGINT) AS order_time
FROM orders AS o
JOIN users AS u
  ON u.user_id = o.user_id
JOIN items AS p
  ON p.product_id = o.product_id
JOIN order_keys AS k
  ON k.order_id = o.order_id
