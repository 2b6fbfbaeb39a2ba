-- The customers of a segment from a dataset version's customers.parquet: the identifiers of each of
-- `segment_users` (the user ids a segment chose, registered from numpy) that has a customer row, by
-- user_id (the order the file has them in). A version stored before the other match keys reads them
-- as NULL (stored_customers, read_stored_customers.sql); the date of birth as YYYY-MM-DD text.
SELECT
    c.user_id, c.email, c.first_name, c.last_name, c.phone, c.country, c.limited_data_use, c.state,
    c.city, c.postcode, CAST(c.date_of_birth AS VARCHAR) AS date_of_birth, c.gender, c.external_id, c.madid
FROM stored_customers($path) AS c
JOIN segment_users AS s ON s.user_id = c.user_id
ORDER BY c.user_id
