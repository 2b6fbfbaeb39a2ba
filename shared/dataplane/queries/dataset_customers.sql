-- customers.parquet of a dataset version (docs/data-plane.md): one row per customer, by user_id.
SELECT user_id, email, first_name, last_name, phone, country, state, limited_data_use, marketing_consent
FROM customers
ORDER BY user_id
