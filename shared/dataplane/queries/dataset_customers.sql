-- customers.parquet of a dataset version (docs/data-plane.md): one row per customer, by user_id.
SELECT
    user_id, email, first_name, last_name, phone, country, state, limited_data_use, marketing_consent,
    city, postcode, CAST(date_of_birth AS DATE) AS date_of_birth, gender, external_id, madid
FROM customers
ORDER BY user_id
