/* The products of a JSON Lines file: every row the record model accepted (`fixed`), into `products`. */
CREATE OR REPLACE TABLE products AS
SELECT
  *
FROM fixed
