-- Distinct phone numbers $first to $last (activation_phone_decided's phones_left), for the Python normaliser.
SELECT country_key, plan, phone_text FROM phones_left WHERE n BETWEEN $first AND $last
