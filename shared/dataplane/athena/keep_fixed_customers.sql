/* The customers of a JSON Lines file: every row the record model accepted (`fixed`), into `customers`. */
CREATE OR REPLACE TABLE customers AS
SELECT
  *
FROM fixed
