-- A products Parquet file (a stored dataset version, synced again to retrain) into `raw` as text, in
-- the file's order, as read_csv_products.sql loads a CSV file.
CREATE OR REPLACE TABLE raw AS
SELECT
    row_number() OVER () AS record,
    CAST(product_id AS VARCHAR) AS product_id,
    CAST(name AS VARCHAR) AS name,
    CAST(category AS VARCHAR) AS category,
    CAST(price AS VARCHAR) AS price
FROM read_parquet($path)
