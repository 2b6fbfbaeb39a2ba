-- The customers only the record model can judge, with their cells, in file order.
SELECT r.record, r.user_id, r.email, r.first_name, r.last_name, r.phone, r.country, r.limited_data_use, r.state,
    r.marketing_consent, r.city, r.postcode, r.date_of_birth, r.gender, r.external_id, r.madid
FROM raw AS r JOIN checked AS c ON c.record = r.record
WHERE c.verdict = 'undecided'
ORDER BY r.record
