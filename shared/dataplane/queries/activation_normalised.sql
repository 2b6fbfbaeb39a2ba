-- Every user's upload row as the platform receives it (docs/platform-notes.md §3.7), as the table
-- normalised (decided and hashed once; the report, the de-duplication and the batches read it): the
-- row as JSON text in the upload's schema (identifiers.SCHEMA, then with $limited_data_use the three
-- data processing options of §3.8, then with $with_value LOOKALIKE_VALUE; "" for a key without a
-- value), whether it has a usable e-mail or phone, and per key why a value was dropped (the DropReason
-- value of shared.audiences.identifiers; 'empty' for a missing one). Values are hashed here (SHA-256
-- of their UTF-8 bytes, lower-case hex) unless already a digest. The rules run here for the common
-- cases; what they cannot decide comes from the tables filled before: country_rules (every distinct
-- country, by the Python normaliser), name_rules (every distinct name: ASCII ones in SQL, the rest by
-- the Python normaliser), email_rules (addresses that are not ASCII) and phone_rules (every distinct
-- phone number, read by the Python normaliser with libphonenumber's plans, already hashed).
-- Adding a key: its cell in activation_load_users, its tests in cells, its value and reason in keys,
-- and its place in the row.
CREATE OR REPLACE TABLE normalised AS
WITH cells AS (
    SELECT
        users.pos,
        coalesce(users.user_id, '') AS user_id,
        users.email,
        is_ascii(users.email) AS email_ascii,
        lower(py_strip(users.email)) AS email_text,
        email_rules.value AS email_rule_value,
        email_rules.reason AS email_rule_reason,
        users.phone,
        users.phone_text,
        users.phone_digest,
        phone_rules.value AS phone_rule_value,
        phone_rules.reason AS phone_rule_reason,
        users.first_name,
        first_rules.value AS first_rule_value,
        first_rules.reason AS first_rule_reason,
        users.last_name,
        last_rules.value AS last_rule_value,
        last_rules.reason AS last_rule_reason,
        country_rules.value AS country_rule_value,
        country_rules.reason AS country_rule_reason,
        country_rules.code AS country_code,
        users.limited_data_use,
        py_strip(users.limited_data_use) AS flag_text,
        py_strip(coalesce(users.state, '')) AS state_text,
        users.value,
        py_strip(users.value) AS value_text
    FROM users
    LEFT JOIN country_rules ON country_rules.key = users.country_key
    LEFT JOIN email_rules ON email_rules.raw = users.email
    LEFT JOIN name_rules AS first_rules ON first_rules.raw = users.first_name
    LEFT JOIN name_rules AS last_rules ON last_rules.raw = users.last_name
    LEFT JOIN phone_rules ON phone_rules.country_key = users.country_key AND phone_rules.text = users.phone_text
),
tested AS (
    SELECT
        *,
        email_ascii
            AND length(email_text) <= 254
            AND regexp_matches(email_text, '^(?:[a-z0-9!#$%&''*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&''*+/=?^_`{|}~-]+)*@(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63})$')
            AS email_valid,
        email_ascii AND NOT contains(email_text, '@') AND is_hex64(email_text) AS email_digest,
        regexp_matches(value_text, '^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$') AS value_plain,
        TRY_CAST(value_text AS DOUBLE) AS number
    FROM cells
),
keys AS (
    SELECT
        pos,
        user_id,
        -- EXTERN_ID: the merchant's id as it is; an id holding an e-mail is sent hashed.
        CASE WHEN contains(user_id, '@') THEN sha256(user_id) ELSE user_id END AS extern_id,
        -- EMAIL: trimmed, lower-cased, a dot-atom address of at most 254 characters
        -- (identifiers.EMAIL_PATTERN), hashed; a digest passes as it is.
        CASE
            WHEN email IS NULL THEN NULL
            WHEN NOT email_ascii THEN nullif(email_rule_value, '')
            WHEN email_valid THEN sha256(email_text)
            WHEN email_digest THEN email_text
        END AS email,
        CASE
            WHEN email IS NULL THEN 'empty'
            WHEN NOT email_ascii THEN email_rule_reason
            WHEN email_valid OR email_digest THEN NULL
            ELSE 'invalid_email'
        END AS email_reason,
        -- PHONE: international digits by the numbering plan of the user's (or the store's) country
        -- (phone_rules); a digest passes as it is.
        CASE
            WHEN phone IS NULL THEN NULL
            WHEN phone_digest THEN lower(phone_text)
            ELSE nullif(phone_rule_value, '')
        END AS phone,
        CASE
            WHEN phone IS NULL THEN 'empty'
            WHEN phone_digest THEN NULL
            ELSE phone_rule_reason
        END AS phone_reason,
        -- FN, LN: each distinct name decided once (name_rules).
        CASE WHEN first_name IS NOT NULL THEN nullif(first_rule_value, '') END AS first_name,
        CASE WHEN first_name IS NULL THEN 'empty' ELSE first_rule_reason END AS first_name_reason,
        CASE WHEN last_name IS NOT NULL THEN nullif(last_rule_value, '') END AS last_name,
        CASE WHEN last_name IS NULL THEN 'empty' ELSE last_rule_reason END AS last_name_reason,
        -- COUNTRY: every distinct value decided by the Python normaliser (already hashed).
        nullif(country_rule_value, '') AS country,
        country_rule_reason AS country_reason,
        -- Limited Data Use (§3.8): the flag (NULL: not given), and whether the person is Californian.
        CASE
            WHEN limited_data_use IS NULL THEN NULL
            ELSE is_ascii(flag_text) AND lower(flag_text) IN ('true', '1', 'yes', 'y', 'on', 't')
        END AS limited_data_use,
        coalesce(country_code = 'us', false)
            AND is_ascii(state_text)
            AND lower(state_text) IN ('ca', 'california') AS californian,
        -- LOOKALIKE_VALUE (§4.1): a plain number of at least 0 (uploads.customer_value), or why not.
        CASE WHEN value_plain AND number >= 0 AND isfinite(number) THEN number END AS value,
        CASE
            WHEN value IS NULL THEN NULL
            WHEN NOT value_plain THEN 'must be a number such as 12.50'
            WHEN NOT coalesce(isfinite(number), false) OR number < 0 THEN 'must be a number of at least 0'
        END AS value_problem
    FROM tested
)
SELECT
    pos,
    user_id,
    email IS NOT NULL OR phone IS NOT NULL AS usable,
    concat(
        '[', to_json(extern_id)::VARCHAR,
        ',"', coalesce(email, ''), '","', coalesce(phone, ''), '","', coalesce(first_name, ''),
        '","', coalesce(last_name, ''), '","', coalesce(country, ''), '"',
        CASE
            WHEN NOT $limited_data_use THEN ''
            WHEN coalesce(limited_data_use, false) AND californian THEN ',["LDU"],1,1000'
            WHEN coalesce(limited_data_use, false) THEN ',["LDU"],0,0'
            ELSE ',[],0,0'
        END,
        CASE WHEN NOT $with_value THEN '' WHEN value IS NULL THEN ',""' ELSE ',' || to_json(value)::VARCHAR END,
        ']'
    ) AS row,
    email_reason,
    phone_reason,
    first_name_reason,
    last_name_reason,
    country_reason,
    value,
    value_problem
FROM keys;
DROP TABLE users
