/* The buyers of `checkout_buyers` who are no customer of the customers file, into `customers`: the */
/* e-mail and name of their first order, the name split at its first space, the other columns NULL; */
/* records numbered after the file's. */
INSERT INTO customers (
  record,
  user_id,
  email,
  first_name,
  last_name
)
SELECT
  (
    SELECT
      COALESCE(MAX(record), 0)
    FROM customers
  ) + ROW_NUMBER() OVER (ORDER BY user_id) AS record,
  user_id,
  email,
  NULLIF(SPLIT_PART(name, ' ', 1), '') AS first_name,
  NULLIF(TRIM(SUBSTR(name, LENGTH(SPLIT_PART(name, ' ', 1)) + 2)), '') AS last_name
FROM (
  SELECT
    user_id,
    MIN_BY(email, paid_at) AS email,
    MIN_BY(name, paid_at) AS name
  FROM checkout_buyers
  WHERE
    new_customer
  GROUP BY
    user_id
) AS buyers
