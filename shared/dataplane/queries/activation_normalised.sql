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
-- phone number, read with libphonenumber's plans in the engine or in Python, already hashed) and
-- key_rules (every distinct value of the other match keys, by the Python normaliser). The other keys
-- follow in the row when $extras (a mask over identifiers.EXTRA_SCHEMA) says the upload sends them.
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
        py_strip(users.value) AS value_text,
        py_strip(users.external_id) AS external_text,
        users.city,
        city_rules.value AS city_rule_value,
        city_rules.reason AS city_rule_reason,
        users.state,
        state_rules.value AS state_rule_value,
        state_rules.reason AS state_rule_reason,
        users.postcode,
        postcode_rules.value AS postcode_rule_value,
        postcode_rules.reason AS postcode_rule_reason,
        users.date_of_birth,
        year_rules.value AS year_rule_value,
        year_rules.reason AS birth_rule_reason,
        month_rules.value AS month_rule_value,
        day_rules.value AS day_rule_value,
        users.gender,
        gender_rules.value AS gender_rule_value,
        gender_rules.reason AS gender_rule_reason,
        users.madid,
        madid_rules.value AS madid_rule_value,
        madid_rules.reason AS madid_rule_reason
    FROM users
    LEFT JOIN country_rules ON country_rules.key = users.country_key
    LEFT JOIN email_rules ON email_rules.raw = users.email
    LEFT JOIN name_rules AS first_rules ON first_rules.raw = users.first_name
    LEFT JOIN name_rules AS last_rules ON last_rules.raw = users.last_name
    LEFT JOIN phone_rules ON phone_rules.country_key = users.country_key AND phone_rules.text = users.phone_text
    LEFT JOIN key_rules AS city_rules
        ON city_rules.key = 'CT' AND city_rules.country_key = '' AND city_rules.raw = users.city
    LEFT JOIN key_rules AS state_rules
        ON state_rules.key = 'ST' AND state_rules.country_key = users.country_key AND state_rules.raw = users.state
    LEFT JOIN key_rules AS postcode_rules
        ON postcode_rules.key = 'ZIP' AND postcode_rules.country_key = users.country_key
        AND postcode_rules.raw = users.postcode
    LEFT JOIN key_rules AS year_rules
        ON year_rules.key = 'DOBY' AND year_rules.country_key = '' AND year_rules.raw = users.date_of_birth
    LEFT JOIN key_rules AS month_rules
        ON month_rules.key = 'DOBM' AND month_rules.country_key = '' AND month_rules.raw = users.date_of_birth
    LEFT JOIN key_rules AS day_rules
        ON day_rules.key = 'DOBD' AND day_rules.country_key = '' AND day_rules.raw = users.date_of_birth
    LEFT JOIN key_rules AS gender_rules
        ON gender_rules.key = 'GEN' AND gender_rules.country_key = '' AND gender_rules.raw = users.gender
    LEFT JOIN key_rules AS madid_rules
        ON madid_rules.key = 'MADID' AND madid_rules.country_key = '' AND madid_rules.raw = users.madid
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
        -- EXTERN_ID: the user's external id (trimmed) when given, else the merchant's id, as it is; an
        -- id holding an e-mail is sent hashed (identifiers.extern_id_of).
        CASE
            WHEN contains(coalesce(external_text, user_id), '@') THEN sha256(coalesce(external_text, user_id))
            ELSE coalesce(external_text, user_id)
        END AS extern_id,
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
        -- CT, ST, ZIP, DOBY/DOBM/DOBD, GEN, MADID: every distinct value decided by the Python
        -- normaliser (key_rules; hashed but MADID; state and postcode by the user's, else the store's,
        -- country).
        nullif(city_rule_value, '') AS city_value,
        CASE WHEN city IS NULL THEN 'empty' ELSE city_rule_reason END AS city_reason,
        nullif(state_rule_value, '') AS state_value,
        CASE WHEN state IS NULL THEN 'empty' ELSE state_rule_reason END AS state_reason,
        nullif(postcode_rule_value, '') AS postcode_value,
        CASE WHEN postcode IS NULL THEN 'empty' ELSE postcode_rule_reason END AS postcode_reason,
        nullif(year_rule_value, '') AS birth_year_value,
        nullif(month_rule_value, '') AS birth_month_value,
        nullif(day_rule_value, '') AS birth_day_value,
        CASE WHEN date_of_birth IS NULL THEN 'empty' ELSE birth_rule_reason END AS birth_reason,
        nullif(gender_rule_value, '') AS gender_value,
        CASE WHEN gender IS NULL THEN 'empty' ELSE gender_rule_reason END AS gender_reason,
        nullif(madid_rule_value, '') AS madid_value,
        CASE WHEN madid IS NULL THEN 'empty' ELSE madid_rule_reason END AS madid_reason,
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
        -- The other keys' values are hex digests or advertising ids: nothing to escape in JSON.
        CASE WHEN $extras[1] THEN ',"' || coalesce(city_value, '') || '"' ELSE '' END,
        CASE WHEN $extras[2] THEN ',"' || coalesce(state_value, '') || '"' ELSE '' END,
        CASE WHEN $extras[3] THEN ',"' || coalesce(postcode_value, '') || '"' ELSE '' END,
        CASE WHEN $extras[4] THEN ',"' || coalesce(birth_year_value, '') || '"' ELSE '' END,
        CASE WHEN $extras[5] THEN ',"' || coalesce(birth_month_value, '') || '"' ELSE '' END,
        CASE WHEN $extras[6] THEN ',"' || coalesce(birth_day_value, '') || '"' ELSE '' END,
        CASE WHEN $extras[7] THEN ',"' || coalesce(gender_value, '') || '"' ELSE '' END,
        CASE WHEN $extras[8] THEN ',"' || coalesce(madid_value, '') || '"' ELSE '' END,
        ']'
    ) AS row,
    email_reason,
    phone_reason,
    first_name_reason,
    last_name_reason,
    country_reason,
    city_reason,
    state_reason,
    postcode_reason,
    birth_reason,
    gender_reason,
    madid_reason,
    value,
    value_problem
FROM keys;
DROP TABLE users
