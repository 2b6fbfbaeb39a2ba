/* The good products of `checked`, and those the record model accepted (`fixed`), into `products`. */
CREATE OR REPLACE TABLE products AS
SELECT
  record,
  product_id,
  name,
  category,
  price
FROM checked
WHERE
  verdict = 'good'
UNION ALL
SELECT
  *
FROM fixed
