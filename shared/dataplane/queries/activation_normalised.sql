-- Every user's identifiers as the platform receives them (docs/platform-notes.md §3.7), as the table
-- normalised (decided once; the report, the de-duplication and the batches read it): per key, the
-- value to send (NULL when none), whether it is still to be hashed (SHA-256 of its UTF-8 bytes, at
-- output) or is already a digest, and why a value was dropped (the DropReason value of
-- shared.audiences.identifiers; 'empty' for a missing one). The rules run here for the common cases;
-- what they cannot decide comes from the tables the Python normaliser filled: country_rules (every
-- distinct country), name_rules and email_rules (values that are not ASCII), phone_shapes and
-- phone_numbers (what the dialing rules do to each number's shape, or to a whole number).
-- The tests are named in the inner selects (plain CTEs: materialising them cost 25 % more CPU,
-- measured); the outer select only chooses.
-- Adding a key: its cell in activation_load_users, its tests below and its three columns above them.
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
            py_strip(users.phone) AS phone_text,
            country_rules.plan AS phone_plan,
            CASE WHEN users.phone IS NOT NULL THEN regexp_replace(users.phone, '[^0-9]', '', 'g') END AS digits,
            users.first_name,
            is_ascii(users.first_name) AS first_ascii,
            py_strip(users.first_name) AS first_text,
            first_rules.value AS first_rule_value,
            first_rules.reason AS first_rule_reason,
            users.last_name,
            is_ascii(users.last_name) AS last_ascii,
            py_strip(users.last_name) AS last_text,
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
        LEFT JOIN country_rules ON country_rules.raw IS NOT DISTINCT FROM users.country
        LEFT JOIN email_rules ON email_rules.raw = users.email
        LEFT JOIN name_rules AS first_rules ON first_rules.raw = users.first_name
        LEFT JOIN name_rules AS last_rules ON last_rules.raw = users.last_name
),
tested AS (
    SELECT
        cells.*,
        phone_shapes.decided AS shape_decided,
        phone_shapes.cut AS shape_cut,
        phone_shapes.prefix AS shape_prefix,
        phone_shapes.reason AS shape_reason,
        phone_numbers.cut AS number_cut,
        phone_numbers.prefix AS number_prefix,
        phone_numbers.reason AS number_reason,
        length(email_text) <= 254 AND regexp_matches(email_text, '^(?:[a-z0-9!#$%&''*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&''*+/=?^_`{|}~-]+)*@(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63})$') AS email_valid,
        NOT contains(email_text, '@') AND is_hex64(email_text) AS email_digest,
        is_hex64(phone_text) AS phone_digest,
        is_hex64(first_text) AS first_digest,
        regexp_replace(lower(first_name), '[^a-z]', '', 'g') AS first_letters,
        is_hex64(last_text) AS last_digest,
        regexp_replace(lower(last_name), '[^a-z]', '', 'g') AS last_letters,
        regexp_matches(value_text, '^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$') AS value_plain,
        TRY_CAST(value_text AS DOUBLE) AS number
    FROM cells
    LEFT JOIN phone_shapes
        ON phone_shapes.plan IS NOT DISTINCT FROM cells.phone_plan
        AND phone_shapes.international = starts_with(cells.phone_text, '+')
        AND phone_shapes.length = length(cells.digits)
        AND phone_shapes.head = left(cells.digits, 6)
    LEFT JOIN phone_numbers
        ON phone_numbers.plan IS NOT DISTINCT FROM cells.phone_plan
        AND phone_numbers.international = starts_with(cells.phone_text, '+')
        AND phone_numbers.digits = cells.digits
)
SELECT
    pos,
    user_id,
    -- EXTERN_ID: the merchant's id as it is; an id holding an e-mail is sent hashed.
    CASE WHEN contains(user_id, '@') THEN sha256(user_id) ELSE user_id END AS extern_id,
    -- EMAIL: trimmed, lower-cased, a dot-atom address of at most 254 characters
    -- (identifiers.EMAIL_PATTERN); a digest passes as it is.
    CASE
        WHEN email IS NULL THEN NULL
        WHEN NOT email_ascii THEN nullif(email_rule_value, '')
        WHEN email_valid OR email_digest THEN email_text
    END AS email_value,
    email IS NOT NULL AND email_ascii AND email_valid AS email_hash_it,
    CASE
        WHEN email IS NULL THEN 'empty'
        WHEN NOT email_ascii THEN email_rule_reason
        WHEN email_valid OR email_digest THEN NULL
        ELSE 'invalid_email'
    END AS email_reason,
    -- PHONE: international digits by the dialing rules of the user's (or the store's) country.
    CASE
        WHEN phone IS NULL THEN NULL
        WHEN phone_digest THEN lower(phone_text)
        WHEN shape_decided AND shape_reason IS NULL THEN shape_prefix || substr(digits, shape_cut + 1)
        WHEN NOT shape_decided AND number_reason IS NULL THEN number_prefix || substr(digits, number_cut + 1)
    END AS phone_value,
    phone IS NOT NULL AND NOT phone_digest AS phone_hash_it,
    CASE
        WHEN phone IS NULL THEN 'empty'
        WHEN phone_digest THEN NULL
        WHEN shape_decided THEN shape_reason
        ELSE number_reason
    END AS phone_reason,
    -- FN, LN: the lower-cased letters a-z of an ASCII name; other names by the Python normaliser.
    CASE
        WHEN first_name IS NULL THEN NULL
        WHEN NOT first_ascii THEN nullif(first_rule_value, '')
        WHEN first_digest THEN lower(first_text)
        ELSE nullif(first_letters, '')
    END AS first_name_value,
    first_name IS NOT NULL AND first_ascii AND NOT first_digest AS first_name_hash_it,
    CASE
        WHEN first_name IS NULL THEN 'empty'
        WHEN NOT first_ascii THEN first_rule_reason
        WHEN first_digest THEN NULL
        WHEN first_letters = '' THEN 'invalid_name'
    END AS first_name_reason,
    CASE
        WHEN last_name IS NULL THEN NULL
        WHEN NOT last_ascii THEN nullif(last_rule_value, '')
        WHEN last_digest THEN lower(last_text)
        ELSE nullif(last_letters, '')
    END AS last_name_value,
    last_name IS NOT NULL AND last_ascii AND NOT last_digest AS last_name_hash_it,
    CASE
        WHEN last_name IS NULL THEN 'empty'
        WHEN NOT last_ascii THEN last_rule_reason
        WHEN last_digest THEN NULL
        WHEN last_letters = '' THEN 'invalid_name'
    END AS last_name_reason,
    -- COUNTRY: every distinct value decided by the Python normaliser (already hashed).
    nullif(country_rule_value, '') AS country_value,
    false AS country_hash_it,
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
FROM tested;
DROP TABLE users
