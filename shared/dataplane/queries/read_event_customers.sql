-- The customers of the dataset version whose purchases are sent (issue 21), from its
-- customers.parquet, into `event_customers`: the identifiers a purchase event carries, and whether the
-- customer refused marketing (a version stored before the marketing_consent column: not flagged; one
-- stored before the other match keys: none given).
CREATE OR REPLACE TABLE event_customers AS
WITH stored AS (
    SELECT * FROM (
        SELECT
            CAST(NULL AS BOOLEAN) AS marketing_consent,
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
    user_id, email, phone, first_name, last_name, country, state, limited_data_use, marketing_consent,
    city, postcode, CAST(date_of_birth AS VARCHAR) AS date_of_birth, gender, external_id, madid
FROM stored
