/* Good rows per file, and the latest order. */
SELECT
  (
    SELECT
      COUNT(*)
    FROM customers
  ) AS customers,
  (
    SELECT
      COUNT(*)
    FROM products
  ) AS products,
  (
    SELECT
      COUNT(*)
    FROM orders
  ) AS orders,
  (
    SELECT
      MAX("timestamp")
    FROM orders
  ) AS orders_end
