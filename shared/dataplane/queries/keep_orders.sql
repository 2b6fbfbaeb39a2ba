-- The good order lines of `checked`, and those the record model accepted (`fixed`), into
-- `orders`.
CREATE OR REPLACE TABLE orders AS
SELECT record, order_id, user_id, product_id, quantity, amount, "timestamp" FROM checked WHERE verdict = 'good'
UNION ALL
SELECT * FROM fixed
