-- The distinct phone numbers of the users (docs/platform-notes.md §3.7), trimmed as Python's
-- str.strip() trims, each with the key of the user's country cell and the country whose numbering
-- plan reads it (country_rules.plan: the user's country, else the store's), numbered from 1 (n) so
-- the Python normaliser reads them a chunk at a time (activation_phone_chunk), each once, with
-- libphonenumber's plans (shared.audiences.phones). Digests are left out.
CREATE OR REPLACE TABLE distinct_phones AS
SELECT row_number() OVER () AS n, numbers.country_key, rules.plan, numbers.phone_text
FROM (
    SELECT DISTINCT country_key, phone_text
    FROM users
    WHERE phone IS NOT NULL AND NOT phone_digest
) AS numbers
JOIN country_rules AS rules ON rules.key = numbers.country_key
