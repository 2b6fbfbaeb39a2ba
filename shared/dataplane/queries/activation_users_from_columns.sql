-- Users given as columns (users_input_columns, numpy columns registered by the caller, NULL for a
-- missing value, limited_data_use and value as text) as the table users_input, in the shape
-- activation_load_users gives a file.
CREATE OR REPLACE TABLE users_input AS
SELECT
    pos,
    blank_as_null(user_id) AS user_id,
    blank_as_null(email) AS email,
    blank_as_null(phone) AS phone,
    blank_as_null(first_name) AS first_name,
    blank_as_null(last_name) AS last_name,
    blank_as_null(country) AS country,
    blank_as_null(limited_data_use) AS limited_data_use,
    blank_as_null(state) AS state,
    blank_as_null(value) AS value,
    NULL::VARCHAR AS score,
    blank_as_null(city) AS city,
    blank_as_null(postcode) AS postcode,
    blank_as_null(date_of_birth) AS date_of_birth,
    blank_as_null(gender) AS gender,
    blank_as_null(external_id) AS external_id,
    blank_as_null(madid) AS madid
FROM users_input_columns
