-- The customers of the dataset version whose purchases are sent (issue 21), from its
-- customers.parquet, into `event_customers`: the identifiers a purchase event carries.
CREATE OR REPLACE TABLE event_customers AS
SELECT user_id, email, phone, first_name, last_name, country, state, limited_data_use FROM read_parquet($path)
