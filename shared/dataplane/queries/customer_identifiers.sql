-- The customers' identifiers for the coverage flags, by user id ('' for a value not given).
SELECT
    user_id,
    coalesce(email, '') AS email,
    coalesce(first_name, '') AS first_name,
    coalesce(last_name, '') AS last_name,
    coalesce(phone, '') AS phone,
    coalesce(country, '') AS country
FROM customers
ORDER BY user_id
