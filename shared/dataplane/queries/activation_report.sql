-- The quality report's counts (shared.audiences.quality): per key (the date of birth once, as DOB)
-- and drop reason (NULL: usable), the number of users; then the totals under the key '*': every user (reason 'total'), those without a
-- usable e-mail or phone ('no_identifier'), those uploaded ('kept') and, of those, with a value
-- ('with_value').
SELECT 'EMAIL' AS key, email_reason AS reason, count(*) AS users FROM normalised GROUP BY email_reason
UNION ALL
SELECT 'PHONE', phone_reason, count(*) FROM normalised GROUP BY phone_reason
UNION ALL
SELECT 'FN', first_name_reason, count(*) FROM normalised GROUP BY first_name_reason
UNION ALL
SELECT 'LN', last_name_reason, count(*) FROM normalised GROUP BY last_name_reason
UNION ALL
SELECT 'COUNTRY', country_reason, count(*) FROM normalised GROUP BY country_reason
UNION ALL
SELECT 'CT', city_reason, count(*) FROM normalised GROUP BY city_reason
UNION ALL
SELECT 'ST', state_reason, count(*) FROM normalised GROUP BY state_reason
UNION ALL
SELECT 'ZIP', postcode_reason, count(*) FROM normalised GROUP BY postcode_reason
UNION ALL
SELECT 'DOB', birth_reason, count(*) FROM normalised GROUP BY birth_reason
UNION ALL
SELECT 'GEN', gender_reason, count(*) FROM normalised GROUP BY gender_reason
UNION ALL
SELECT 'MADID', madid_reason, count(*) FROM normalised GROUP BY madid_reason
UNION ALL
SELECT '*', 'total', count(*) FROM normalised
UNION ALL
SELECT '*', 'no_identifier', count(*) FROM normalised WHERE NOT usable
UNION ALL
SELECT '*', 'kept', count(*) FROM kept
UNION ALL
SELECT '*', 'with_value', count(*) FROM kept JOIN normalised USING (pos) WHERE normalised.value IS NOT NULL
