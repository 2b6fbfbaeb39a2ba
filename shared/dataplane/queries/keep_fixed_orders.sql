-- The orders of a JSON Lines file: every row the record model accepted (`fixed`), into `orders`.
CREATE OR REPLACE TABLE orders AS SELECT * FROM fixed
