-- The customers of a segment from a dataset version's customers.parquet: the identifiers of each of
-- `segment_users` (the user ids a segment chose, registered from numpy) that has a customer row, by
-- user_id (the order the file has them in).
SELECT c.user_id, c.email, c.first_name, c.last_name, c.phone, c.country, c.limited_data_use, c.state
FROM read_parquet($path) AS c
JOIN segment_users AS s ON s.user_id = c.user_id
ORDER BY c.user_id
