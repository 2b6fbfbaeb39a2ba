-- The buyers of `checkout_buyers` who are no customer of the customers file, into `customers`: the
-- e-mail and name of their first order, the name split at its first space, the other columns NULL;
-- records numbered after the file's.
INSERT INTO customers (record, user_id, email, first_name, last_name)
SELECT
    (SELECT coalesce(max(record), 0) FROM customers) + row_number() OVER (ORDER BY user_id) AS record,
    user_id,
    email,
    nullif(split_part(name, ' ', 1), '') AS first_name,
    nullif(trim(substr(name, length(split_part(name, ' ', 1)) + 2)), '') AS last_name
FROM (
    SELECT user_id, arg_min(email, paid_at) AS email, arg_min(name, paid_at) AS name
    FROM checkout_buyers
    WHERE new_customer
    GROUP BY user_id
) AS buyers
