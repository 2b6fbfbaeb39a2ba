-- The distinct e-mail addresses the bulk path cannot decide (not ASCII), for the Python normaliser.
SELECT DISTINCT email FROM users WHERE email IS NOT NULL AND NOT is_ascii(email)
