-- The users to normalise (users_input: a loaded file, a part of one, or columns), with what later
-- queries read of each cell worked out once: the country as the key of its rule (country_rules.key:
-- '' for none), and of a phone cell the cell trimmed as str.strip() trims it and whether it is
-- already a digest (docs/platform-notes.md §3.7); the other match keys' cells as they are.
CREATE OR REPLACE TABLE users AS
SELECT
    *,
    coalesce(country, '') AS country_key,
    is_hex64(phone_text) AS phone_digest
FROM (
    SELECT
        pos, user_id, email, phone, first_name, last_name, country, limited_data_use, state, value,
        city, postcode, date_of_birth, gender, external_id, madid,
        py_strip(phone) AS phone_text
    FROM users_input
) AS cells
