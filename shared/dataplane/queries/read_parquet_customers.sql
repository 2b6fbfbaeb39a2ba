-- A customers Parquet file (a stored dataset version, synced again to retrain) into `raw` as text, in
-- the file's order, as read_csv_customers.sql loads a CSV file. A version stored before a column
-- existed (marketing_consent) reads it as NULL: not given.
CREATE OR REPLACE TABLE raw AS
WITH stored AS (
    SELECT * FROM (SELECT CAST(NULL AS VARCHAR) AS marketing_consent LIMIT 0)
    UNION ALL BY NAME
    SELECT * FROM read_parquet($path)
)
SELECT
    row_number() OVER () AS record,
    CAST(user_id AS VARCHAR) AS user_id,
    CAST(email AS VARCHAR) AS email,
    CAST(first_name AS VARCHAR) AS first_name,
    CAST(last_name AS VARCHAR) AS last_name,
    CAST(phone AS VARCHAR) AS phone,
    CAST(country AS VARCHAR) AS country,
    CAST(limited_data_use AS VARCHAR) AS limited_data_use,
    CAST(state AS VARCHAR) AS state,
    CAST(marketing_consent AS VARCHAR) AS marketing_consent
FROM stored
