-- The users to normalise (users_input: a loaded file, a part of one, or columns), with what later
-- queries read of each cell worked out once: the country as the key of its rule (country_rules.key:
-- '' for none), and of a phone cell the cell trimmed as str.strip() trims it, its ASCII digits in
-- order, whether it is already a digest, and its shape (docs/platform-notes.md §3.7): whether it was
-- written with "+", how many digits it has, its first six and the user's country, as one key
-- (phone_shapes.shape; the country last, so the key reads one way only).
CREATE OR REPLACE TABLE users AS
SELECT
    *,
    CASE
        WHEN phone IS NOT NULL AND NOT phone_digest
            THEN concat(
                CASE WHEN starts_with(phone_text, '+') THEN '+' ELSE '-' END,
                length(phone_digits), '|', left(phone_digits, 6), '|', country_key
            )
    END AS phone_shape
FROM (
    SELECT
        *,
        coalesce(country, '') AS country_key,
        is_hex64(phone_text) AS phone_digest,
        regexp_replace(phone_text, '[^0-9]', '', 'g') AS phone_digits
    FROM (
        SELECT
            pos, user_id, email, phone, first_name, last_name, country, limited_data_use, state, value,
            py_strip(phone) AS phone_text
        FROM users_input
    ) AS cells
) AS keyed
