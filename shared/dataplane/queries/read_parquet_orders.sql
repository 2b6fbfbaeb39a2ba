-- A orders Parquet file (a stored dataset version, synced again to retrain) into `raw` as text, in
-- the file's order, as read_csv_orders.sql loads a CSV file.
CREATE OR REPLACE TABLE raw AS
SELECT
    row_number() OVER () AS record,
    CAST(order_id AS VARCHAR) AS order_id,
    CAST(user_id AS VARCHAR) AS user_id,
    CAST(product_id AS VARCHAR) AS product_id,
    CAST(quantity AS VARCHAR) AS quantity,
    CAST(amount AS VARCHAR) AS amount,
    CAST("timestamp" AS VARCHAR) AS "timestamp"
FROM read_parquet($path)
