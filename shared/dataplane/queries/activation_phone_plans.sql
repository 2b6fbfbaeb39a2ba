-- The plans that read at least $least numbers (activation_phone_national runs once for each; the
-- numbers of the others are left to the Python normaliser).
SELECT key FROM phone_numbers WHERE reason IS NULL GROUP BY key HAVING count(*) >= $least ORDER BY key
