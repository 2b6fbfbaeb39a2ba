-- A customers Parquet file (a stored dataset version, synced again to retrain) into `raw` as text, in
-- the file's order, as read_csv_customers.sql loads a CSV file. A version stored before a column
-- existed (marketing_consent, the other match keys) reads it as NULL: not given (stored_customers,
-- read_stored_customers.sql).
CREATE OR REPLACE TABLE raw AS
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
    CAST(marketing_consent AS VARCHAR) AS marketing_consent,
    CAST(city AS VARCHAR) AS city,
    CAST(postcode AS VARCHAR) AS postcode,
    CAST(date_of_birth AS VARCHAR) AS date_of_birth,
    CAST(gender AS VARCHAR) AS gender,
    CAST(external_id AS VARCHAR) AS external_id,
    CAST(madid AS VARCHAR) AS madid
FROM stored_customers($path)
