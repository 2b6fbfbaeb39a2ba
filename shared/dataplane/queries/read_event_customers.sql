-- The customers of the dataset version whose purchases are sent (issue 21), from its
-- customers.parquet, into `event_customers`: the identifiers a purchase event carries, and whether the
-- customer refused marketing (a version stored before the marketing_consent column: not flagged).
CREATE OR REPLACE TABLE event_customers AS
WITH stored AS (
    SELECT * FROM (SELECT CAST(NULL AS BOOLEAN) AS marketing_consent LIMIT 0)
    UNION ALL BY NAME
    SELECT * FROM read_parquet($path)
)
SELECT user_id, email, phone, first_name, last_name, country, state, limited_data_use, marketing_consent
FROM stored
