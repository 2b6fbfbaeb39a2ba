/* An orders file read with the merchant's own column matching (the mapping step): an order keyed by */
/* the customer's e-mail (a user_id with an "@") names them by it trimmed and lower-cased, as the */
/* customers keyed by e-mail are (shape_matched_customers, shape_email_keyed_customers): an e-mail is */
/* the same customer in any case. Any other user_id is the key as written. */
CREATE OR REPLACE TABLE raw AS
SELECT
  record,
  order_id,
  CASE WHEN CONTAINS(user_id, '@') THEN LOWER(TRIM(user_id)) ELSE user_id END AS user_id,
  product_id,
  quantity,
  amount,
  "timestamp"
FROM raw
