-- The problems SQL decided for the customers of `checked` (a blank user_id).
INSERT INTO errors
SELECT 'customers', record, 'user_id', user_id_reason, CAST(NULL AS BIGINT) FROM checked WHERE verdict = 'bad'
