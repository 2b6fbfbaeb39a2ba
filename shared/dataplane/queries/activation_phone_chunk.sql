-- Distinct phone numbers $first to $last (activation_distinct_phones' n), for the Python normaliser.
SELECT country_key, plan, phone_text FROM distinct_phones WHERE n BETWEEN $first AND $last
