-- The customers of a segment from a dataset version's customers.parquet: the identifiers of each of
-- `segment_users` (the user ids a segment chose, registered from numpy) that has a customer row, by
-- user_id (the order the file has them in). A version stored before the other match keys reads them
-- as NULL; the date of birth as YYYY-MM-DD text.
WITH stored AS (
    SELECT * FROM (
        SELECT
            CAST(NULL AS VARCHAR) AS city,
            CAST(NULL AS VARCHAR) AS postcode,
            CAST(NULL AS DATE) AS date_of_birth,
            CAST(NULL AS VARCHAR) AS gender,
            CAST(NULL AS VARCHAR) AS external_id,
            CAST(NULL AS VARCHAR) AS madid
        LIMIT 0
    )
    UNION ALL BY NAME
    SELECT * FROM read_parquet($path)
)
SELECT
    c.user_id, c.email, c.first_name, c.last_name, c.phone, c.country, c.limited_data_use, c.state,
    c.city, c.postcode, CAST(c.date_of_birth AS VARCHAR) AS date_of_birth, c.gender, c.external_id, c.madid
FROM stored AS c
JOIN segment_users AS s ON s.user_id = c.user_id
ORDER BY c.user_id
