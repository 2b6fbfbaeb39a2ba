/* Good orders rows kept. */
SELECT
  COUNT(*)
FROM orders
