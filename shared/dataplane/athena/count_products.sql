/* Good products rows kept. */
SELECT
  COUNT(*)
FROM products
