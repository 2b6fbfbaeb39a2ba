/* The customers' identifiers for the coverage flags, by user id ('' for a value not given). */
SELECT
  user_id,
  COALESCE(email, '') AS email,
  COALESCE(first_name, '') AS first_name,
  COALESCE(last_name, '') AS last_name,
  COALESCE(phone, '') AS phone,
  COALESCE(country, '') AS country
FROM customers
ORDER BY
  user_id
