-- The distinct phone numbers of the users (docs/platform-notes.md §3.7), trimmed as Python's
-- str.strip() trims, each with the key of the user's country cell and the country whose numbering
-- plan reads it (country_rules.plan: the user's country, else the store's): the Python normaliser
-- reads each once with libphonenumber's plans (shared.audiences.phones). Digests are left out.
SELECT numbers.country_key, rules.plan, numbers.phone_text
FROM (
    SELECT DISTINCT country_key, phone_text
    FROM users
    WHERE phone IS NOT NULL AND NOT phone_digest
) AS numbers
JOIN country_rules AS rules ON rules.key = numbers.country_key
