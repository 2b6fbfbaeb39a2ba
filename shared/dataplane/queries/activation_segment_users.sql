-- A segment's users (segment_chosen) joined to their identifiers in a dataset version's
-- customers.parquet ($path; a user without a customer row is left out), as the table segment_users,
-- each with its rank: 0 for the best score, ties by user_id (byte order of UTF-8, which is Python's
-- order of code points), a NaN score last, the order shared.audiences.holdout.split_holdout sorts by
-- and the order the users files are written in. A version stored before the other match keys reads
-- them as NULL (stored_customers, read_stored_customers.sql); the date of birth as YYYY-MM-DD text.
-- held (kept out by a holdout) starts false.
CREATE OR REPLACE TABLE segment_users AS
SELECT
    row_number() OVER (
        ORDER BY CASE WHEN isnan(s.score) THEN CAST('-inf' AS DOUBLE) ELSE s.score END DESC, c.user_id
    ) - 1 AS rank,
    c.user_id, c.email, c.first_name, c.last_name, c.phone, c.country, c.limited_data_use, c.state,
    c.city, c.postcode, CAST(c.date_of_birth AS VARCHAR) AS date_of_birth, c.gender, c.external_id,
    c.madid, s.score, s.value, false AS held
FROM stored_customers($path) AS c
JOIN segment_chosen AS s ON s.user_id = c.user_id
