-- stored_customers(path): the customers Parquet file at path (a stored dataset version's
-- customers.parquet, or a merchant's own Parquet file synced again) with every column a later version
-- added: marketing_consent (issue 21) and the other match keys (issue 23), NULL in a file stored
-- before them. Those columns read as text, whatever the file's own type (a reader casts what it
-- needs); the file's other columns keep theirs. Defined (shared.dataplane.queries.MACROS) just before
-- each reader of stored versions (read_parquet_customers, read_event_customers,
-- read_segment_customers, activation_segment_users) that reads stored_customers($path). On Athena
-- the Glue table over the Parquet has every column, and a query reads it instead.
CREATE OR REPLACE TEMP MACRO stored_customers(path) AS TABLE
SELECT * FROM (
    SELECT
        CAST(NULL AS VARCHAR) AS marketing_consent,
        CAST(NULL AS VARCHAR) AS city,
        CAST(NULL AS VARCHAR) AS postcode,
        CAST(NULL AS VARCHAR) AS date_of_birth,
        CAST(NULL AS VARCHAR) AS gender,
        CAST(NULL AS VARCHAR) AS external_id,
        CAST(NULL AS VARCHAR) AS madid
    LIMIT 0
)
UNION ALL BY NAME
SELECT * FROM read_parquet(path)
