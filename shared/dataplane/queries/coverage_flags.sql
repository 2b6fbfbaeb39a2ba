-- identifiers.npz's columns (shared.datasources.coverage), by sorted user_id: each customer's country
-- as stored, which identifiers were given, and which survive the platform's normalisation
-- (`normalised`, the activation's decision per user: a NULL reason is a usable value). A customer is
-- usable with a usable e-mail or phone; names count only for a usable customer, as the upload sends
-- them only then.
SELECT
    normalised.user_id,
    coalesce(customers.country, '') AS country,
    customers.email IS NOT NULL AS has_email,
    customers.phone IS NOT NULL AS has_phone,
    customers.first_name IS NOT NULL AND customers.last_name IS NOT NULL AS has_name,
    normalised.email_reason IS NULL AS usable_email,
    normalised.phone_reason IS NULL AS usable_phone,
    normalised.usable AND normalised.first_name_reason IS NULL AND normalised.last_name_reason IS NULL
        AS usable_name,
    normalised.usable
FROM normalised
JOIN customers ON customers.user_id = normalised.user_id
ORDER BY normalised.user_id
