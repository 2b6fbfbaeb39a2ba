-- The distinct values of the other match keys (docs/platform-notes.md §3.7) for the Python normaliser:
-- state and postcode with the user's country key and the country whose rules read them
-- (country_rules.plan: the user's, else the store's), city, date of birth, gender and advertising id
-- alone (their rules do not depend on the country). Values repeat across users, so there are few
-- (advertising ids excepted, one per user, each a short regular expression).
SELECT 'CT' AS key, '' AS country_key, NULL::VARCHAR AS plan, raw
FROM (SELECT DISTINCT city AS raw FROM users WHERE city IS NOT NULL)
UNION ALL
SELECT 'ST', keys.country_key, rules.plan, keys.raw
FROM (SELECT DISTINCT country_key, state AS raw FROM users WHERE state IS NOT NULL) AS keys
JOIN country_rules AS rules ON rules.key = keys.country_key
UNION ALL
SELECT 'ZIP', keys.country_key, rules.plan, keys.raw
FROM (SELECT DISTINCT country_key, postcode AS raw FROM users WHERE postcode IS NOT NULL) AS keys
JOIN country_rules AS rules ON rules.key = keys.country_key
UNION ALL
SELECT 'DOB', '', NULL::VARCHAR, raw FROM (SELECT DISTINCT date_of_birth AS raw FROM users WHERE date_of_birth IS NOT NULL)
UNION ALL
SELECT 'GEN', '', NULL::VARCHAR, raw FROM (SELECT DISTINCT gender AS raw FROM users WHERE gender IS NOT NULL)
UNION ALL
SELECT 'MADID', '', NULL::VARCHAR, raw FROM (SELECT DISTINCT madid AS raw FROM users WHERE madid IS NOT NULL)
