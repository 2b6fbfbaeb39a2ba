/* Good customers rows kept. */
SELECT
  COUNT(*)
FROM customers
