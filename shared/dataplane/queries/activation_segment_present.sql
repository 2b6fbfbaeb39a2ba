-- Which columns some uploaded user of a segment (segment_users, not held) has a value in: the users
-- file writes a column only then (shared.activation.users_files.users_csv_header).
SELECT
    coalesce(bool_or(limited_data_use IS NOT NULL), false) AS limited_data_use,
    coalesce(bool_or(state IS NOT NULL), false) AS state,
    coalesce(bool_or(city IS NOT NULL), false) AS city,
    coalesce(bool_or(postcode IS NOT NULL), false) AS postcode,
    coalesce(bool_or(date_of_birth IS NOT NULL), false) AS date_of_birth,
    coalesce(bool_or(gender IS NOT NULL), false) AS gender,
    coalesce(bool_or(external_id IS NOT NULL), false) AS external_id,
    coalesce(bool_or(madid IS NOT NULL), false) AS madid
FROM segment_users
WHERE NOT held
