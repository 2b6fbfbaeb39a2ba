-- The customers of the dataset version whose purchases are sent (issue 21), from its
-- customers.parquet (stored_customers, read_stored_customers.sql), into `event_customers`: the
-- identifiers a purchase event carries, and whether the customer refused marketing (a version stored
-- before the marketing_consent column: not flagged; one stored before the other match keys: none given).
CREATE OR REPLACE TABLE event_customers AS
SELECT
    user_id, email, phone, first_name, last_name, country, state, limited_data_use,
    CAST(marketing_consent AS BOOLEAN) AS marketing_consent,
    city, postcode, CAST(date_of_birth AS VARCHAR) AS date_of_birth, gender, external_id, madid
FROM stored_customers($path)
