/* Order lines keyed by the customer's e-mail (WooCommerce's orders export, one row per line item, the */
/* order's fields on every row: shared/datasources/shop_exports.py): the e-mail trimmed and lower-cased, */
/* as the customers are keyed (shape_email_keyed_customers); every other cell as it is. */
CREATE OR REPLACE TABLE raw AS
SELECT
  record,
  order_id,
  LOWER(TRIM(user_id)) AS user_id,
  product_id,
  quantity,
  amount,
  "timestamp"
FROM raw
