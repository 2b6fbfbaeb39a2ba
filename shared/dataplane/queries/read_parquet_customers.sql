-- A customers Parquet file (a stored dataset version, synced again to retrain) into `raw` as text, in
-- the file's order, as read_csv_customers.sql loads a CSV file.
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
    CAST(state AS VARCHAR) AS state
FROM read_parquet($path)
